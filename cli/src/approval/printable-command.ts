import { formatCount } from '../format-count.js';

/** Characters of a command shown whole at most; a longer one shows its start and end, the middle counted. */
export const SHOWN_COMMAND_CHARS = 2_000;
/** Of a longer command: characters shown of its start, and of its end. */
const HEAD_CHARS = 1_200;
const TAIL_CHARS = 600;

/**
 * Characters a terminal does not print as themselves: control characters (C0, DEL, C1 — escape
 * sequences start with ESC or CSI), format characters (bidirectional overrides, zero-width
 * characters), line and paragraph separators, and lone surrogates.
 */
const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/gu;

/** A command made safe to show on a terminal, and what was done to it. */
export interface PrintableCommand {
  /** The command with every unprintable character escaped (`\n`, `\t`, `\x1b`, `\u{202e}`), possibly shortened. */
  readonly text: string;
  /** Whether characters were escaped (the text then does not show the command byte for byte). */
  readonly escaped: boolean;
  /** Characters of the middle left out (0: shown whole). */
  readonly omitted: number;
}

/**
 * A model's command as it can be shown to the user who must approve it: one line, with nothing in
 * it that the terminal would act on instead of print (so the command cannot move the cursor, erase
 * or recolour the screen, reorder text or hide a part of itself), and whole up to
 * {@link SHOWN_COMMAND_CHARS} characters; beyond, its start and end with the length of the part
 * left out in between, clearly marked.
 */
export function printableCommand(command: string): PrintableCommand {
  let escaped = false;
  const escape = (text: string): string => {
    const safe = escapeUnprintable(text);
    if (safe !== text) escaped = true;
    return safe;
  };
  const chars = Array.from(command);
  if (chars.length <= SHOWN_COMMAND_CHARS) return { text: escape(command), escaped, omitted: 0 };
  const omitted = chars.length - HEAD_CHARS - TAIL_CHARS;
  const head = escape(chars.slice(0, HEAD_CHARS).join(''));
  const tail = escape(chars.slice(-TAIL_CHARS).join(''));
  return { text: `${head} [… ${formatCount(omitted)} characters not shown …] ${tail}`, escaped, omitted };
}

/**
 * The text with every character a terminal would not print as itself escaped (`\n`, `\t`, `\x1b`,
 * `\u{202e}`): what a model or a command wrote, made safe to print on one line — or on several with
 * `keepLayout` (line breaks and tabs are then kept; a carriage return is still escaped, since it
 * would let a line overwrite itself).
 */
export function escapeUnprintable(text: string, keepLayout = false): string {
  return text.replace(UNPRINTABLE, (char) => (keepLayout && (char === '\n' || char === '\t') ? char : escapeChar(char)));
}

function escapeChar(char: string): string {
  switch (char) {
    case '\n':
      return '\\n';
    case '\r':
      return '\\r';
    case '\t':
      return '\\t';
  }
  const code = char.codePointAt(0)!;
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u{${code.toString(16)}}`;
}
