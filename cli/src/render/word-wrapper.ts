/**
 * Wraps streamed text at word boundaries for a terminal `width()` columns wide: a word that does not
 * fit on the current line starts the next one (the spaces before it are dropped), and a word longer
 * than a whole line is cut at the width. A word is held back until it is known to be complete (the
 * next space or line break, or {@link WordWrapper.flush}), unless it is already too long for the
 * line. Lines started by wrapping begin with `indent`. Without a width, text passes through unchanged.
 *
 * Widths are counted in UTF-16 code units (a wide character, such as a CJK one, counts as one column).
 */
export class WordWrapper {
  /** Columns used on the current line, by what was returned so far. */
  column = 0;
  /** Where the text of the current line starts (after the indent of a wrapped line). */
  private lineStart = 0;
  private spaces = '';
  private word = '';

  constructor(
    private readonly width: () => number | undefined,
    private readonly indent = '',
  ) {}

  /** Takes the next piece of the stream; returns the text to write now. */
  push(text: string): string {
    const width = this.usableWidth();
    if (width === undefined) {
      const newline = text.lastIndexOf('\n');
      this.column = newline === -1 ? this.column + text.length : text.length - newline - 1;
      return text;
    }
    let out = '';
    for (const [piece] of text.matchAll(/\n|[^\S\n]+|\S+/g)) {
      if (piece === '\n') {
        out += `${this.flushWord(width)}\n`;
        this.column = 0;
        this.lineStart = 0;
        this.spaces = '';
      } else if (/^\s/.test(piece)) {
        out += this.flushWord(width);
        this.spaces += piece.replace(/\s/g, ' ');
      } else {
        this.word += piece;
        out += this.cutLongWord(width);
      }
    }
    return out;
  }

  /** Ends the stream: returns the word held back (spaces at the end are dropped). */
  flush(): string {
    const width = this.usableWidth();
    const out = width === undefined ? '' : this.flushWord(width);
    this.spaces = '';
    return out;
  }

  /** Starts over at the beginning of a line (text written around the wrapper ended with a newline). */
  reset(): void {
    this.column = 0;
    this.lineStart = 0;
    this.spaces = '';
    this.word = '';
  }

  /** The width, unless there is none or it is too narrow to wrap at all. */
  private usableWidth(): number | undefined {
    const width = this.width();
    return width !== undefined && width > this.indent.length + 1 ? width : undefined;
  }

  private newline(): string {
    this.column = this.indent.length;
    this.lineStart = this.indent.length;
    this.spaces = '';
    return `\n${this.indent}`;
  }

  private fits(width: number): boolean {
    return this.column + this.spaces.length + this.word.length <= width;
  }

  private flushWord(width: number): string {
    if (this.word === '') return '';
    let out: string;
    if (this.fits(width)) {
      out = this.spaces + this.word;
    } else {
      // A word that does not fit after what the line holds starts the next line; at the start of
      // a line, the spaces before it go instead.
      out = (this.column > this.lineStart ? this.newline() : '') + this.word;
      this.spaces = '';
    }
    this.column += this.spaces.length + this.word.length;
    this.spaces = '';
    this.word = '';
    return out;
  }

  /** Writes what of the held word cannot fit anyway: full lines of a word longer than a line. */
  private cutLongWord(width: number): string {
    if (this.fits(width)) return '';
    const room = width - this.lineStartFor();
    if (this.word.length <= room) return ''; // it fits on a line of its own: wait for its end
    let out = this.column > this.lineStart ? this.newline() : '';
    this.spaces = '';
    while (!this.fits(width)) {
      const cut = width - this.column;
      out += this.word.slice(0, cut) + this.newline();
      this.word = this.word.slice(cut);
    }
    return out;
  }

  /** Where the held word would start on a line of its own. */
  private lineStartFor(): number {
    return this.column > this.lineStart ? this.indent.length : this.lineStart;
  }
}

/** Wraps a whole text (see {@link WordWrapper}); lines started by wrapping begin with `indent`. */
export function wrapText(text: string, width: number | undefined, indent = ''): string {
  const wrapper = new WordWrapper(() => width, indent);
  return wrapper.push(text) + wrapper.flush();
}
