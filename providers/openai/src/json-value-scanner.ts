const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/**
 * Tells, incrementally and in linear time, whether streamed text has become one complete JSON object
 * or array (brackets balanced outside strings). It does not validate the JSON: it only spots the
 * closing bracket. Text that starts with anything but `{` or `[` never counts as complete.
 */
export class JsonValueScanner {
  #depth = 0;
  #inString = false;
  #escaped = false;
  #state: 'empty' | 'open' | 'complete' | 'never' = 'empty';

  /** Whether the text fed so far is one complete object or array (trailing whitespace allowed). */
  get complete(): boolean {
    return this.#state === 'complete';
  }

  /** Feeds the next fragment. */
  feed(text: string): void {
    for (let i = 0; i < text.length && this.#state !== 'never'; i++) {
      const c = text.charCodeAt(i);
      if (this.#inString) {
        if (this.#escaped) this.#escaped = false;
        else if (c === BACKSLASH) this.#escaped = true;
        else if (c === QUOTE) this.#inString = false;
        continue;
      }
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) continue;
      if (this.#state === 'complete' || (this.#state === 'empty' && c !== OPEN_BRACE && c !== OPEN_BRACKET)) {
        this.#state = 'never'; // something after the value, or a value that is no object or array
        return;
      }
      if (c === QUOTE) this.#inString = true;
      else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
        this.#depth++;
        this.#state = 'open';
      } else if ((c === CLOSE_BRACE || c === CLOSE_BRACKET) && --this.#depth === 0) {
        this.#state = 'complete';
      }
    }
  }
}
