/** What {@link feedEveryLineEnd} needs of an SSE parser (`eventsource-parser`'s has it). */
export interface SseFeed {
  feed(chunk: string): void;
}

const CR = 13;
const LF = 10;

/**
 * A `feed` for an `eventsource-parser` parser under which every line end the SSE standard allows —
 * CRLF, LF and a lone CR — ends its line as soon as it arrives.
 *
 * `eventsource-parser` 3 holds back a CR that ends the text it is fed, as it may be the first half
 * of a CRLF split across two reads: with CR-only line ends the event it ends comes out only with
 * the next read, and the last event of a body never (eventsource-parser 4 settles this itself, but
 * needs Node 22.12). Here the text is fed with an LF after such a CR, and an LF that then begins the
 * next text is dropped: a CR, a CRLF, or a CR and an LF split across reads are each one line end, so
 * the parser sees the same lines, only without the wait.
 */
export function feedEveryLineEnd(parser: SseFeed): (text: string) => void {
  let afterCR = false;
  return (text) => {
    if (text === '') return;
    if (afterCR && text.charCodeAt(0) === LF) {
      afterCR = false;
      if (text.length === 1) return;
      text = text.slice(1);
    }
    afterCR = text.charCodeAt(text.length - 1) === CR;
    parser.feed(afterCR ? `${text}\n` : text);
  };
}
