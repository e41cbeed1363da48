/**
 * The SSE body of a Chat Completions stream, as the provider reads it: the provider kit's
 * `SseJsonDecoder` with `eventsource-parser`'s parser.
 */
import { ChatProviderError, SseJsonDecoder, type StreamEventConverter } from '@kosong/core/provider-kit';
import { expect } from 'chai';
import { createParser } from 'eventsource-parser';

const encode = (text: string): Uint8Array => new TextEncoder().encode(text);

/** A converter that keeps every chunk it is given. */
function recorder(chunks: unknown[]): StreamEventConverter {
  return { id: undefined, usage: undefined, finishReason: undefined, push: (chunk) => void chunks.push(chunk), end: () => undefined };
}

/** Feeds `pieces` (each a separate read) and returns the chunks, and what the decoder threw, if it did. */
function decode(pieces: readonly Uint8Array[], maxEventChars?: number): { chunks: unknown[]; error: unknown; decoder: SseJsonDecoder } {
  const chunks: unknown[] = [];
  const decoder = new SseJsonDecoder(recorder(chunks), { createParser, maxEventChars });
  try {
    for (const piece of pieces) decoder.feed(piece, []);
    return { chunks, error: undefined, decoder };
  } catch (error) {
    return { chunks, error, decoder };
  }
}

/** A body with every SSE form a server may use: comments, event/id/retry fields, CRLF and CR line ends, multi-line data, multi-byte characters. */
const AWKWARD_BODY = [
  ': keep-alive comment\n\n',
  'data: {"n":1,"text":"ü€"}\n\n',
  'event: message\r\nid: 7\r\nretry: 1000\r\ndata: {"n":2,\r\ndata: "text":"😀"}\r\n\r\n',
  ':another comment\r\n',
  'data:{"n":3}\r\rdata: {"n":4}\n\n',
  'data: [DONE]\n\n',
].join('');
const AWKWARD_CHUNKS = [{ n: 1, text: 'ü€' }, { n: 2, text: '😀' }, { n: 3 }, { n: 4 }];

describe('SseJsonDecoder with eventsource-parser: the SSE body of a Chat Completions stream', () => {
  it('reads comments, event/id/retry fields, CRLF and CR line ends, multi-line data and multi-byte characters', () => {
    const { chunks, error, decoder } = decode([encode(AWKWARD_BODY)]);
    expect(error).to.equal(undefined);
    expect(chunks).to.deep.equal(AWKWARD_CHUNKS);
    expect(decoder.done).to.equal(true);
    expect(decoder.events).to.equal(5);
  });

  it('gives the same chunks however the body is split: at every byte boundary, and one byte per read', () => {
    const bytes = encode(AWKWARD_BODY);
    for (let cut = 1; cut < bytes.length; cut++) {
      const { chunks, error } = decode([bytes.subarray(0, cut), bytes.subarray(cut)]);
      expect({ cut, chunks, error }).to.deep.equal({ cut, chunks: AWKWARD_CHUNKS, error: undefined });
    }
    const single = decode(Array.from(bytes, (byte) => Uint8Array.of(byte)));
    expect(single.chunks).to.deep.equal(AWKWARD_CHUNKS);
  });

  it('ends at `data: [DONE]`: events after it are counted but not read, even malformed ones', () => {
    const { chunks, error, decoder } = decode([encode('data: {"a":1}\n\ndata: [DONE]\n\ndata: {"b":2}\n\ndata: not json\n\n')]);
    expect(error).to.equal(undefined);
    expect(chunks).to.deep.equal([{ a: 1 }]);
    expect(decoder).to.include({ done: true, events: 4 });
  });

  it('passes a chunk with an `error` on like any other (what it means is for the converter: see stream-errors.spec)', () => {
    const { chunks, error } = decode([encode('data: {"a":1}\n\ndata: {"error":{"message":"Connection limit exceeded","type":"server_error"}}\n\n')]);
    expect(error).to.equal(undefined);
    expect(chunks).to.deep.equal([{ a: 1 }, { error: { message: 'Connection limit exceeded', type: 'server_error' } }]);
  });

  it('reads CR-only line ends up to the last event, also when a read ends with a CR', () => {
    const body = 'data: {"n":1}\r\rdata: {"n":2}\r\r';
    expect(decode([encode(body)]).chunks).to.deep.equal([{ n: 1 }, { n: 2 }]);
    expect(decode(body.split(/(?<=\r)/).map(encode)).chunks).to.deep.equal([{ n: 1 }, { n: 2 }]);
    const split = decode([encode('data: {"n":\r'), encode('\ndata: 1}\r\n'), encode('\r\n')]);
    expect({ chunks: split.chunks, error: split.error }, 'a CRLF split across reads is one line end, not an empty line').to.deep.equal({ chunks: [{ n: 1 }], error: undefined });
  });

  it('throws a ChatProviderError for data that is not JSON ("malformed stream data"), after the chunks before it', () => {
    const { chunks, error } = decode([encode('data: {"a":1}\n\ndata: {oops\n\n')]);
    expect(chunks).to.deep.equal([{ a: 1 }]);
    expect(ChatProviderError.isInstance(error)).to.equal(true);
    expect((error as Error).message).to.equal('The server sent malformed stream data (an event that is not JSON): {oops');
  });

  it('drops an event the body ends in the middle of (a server that closed mid-event), and an event with no data', () => {
    const { chunks, decoder } = decode([encode('data: {"a":1}\n\nevent: ping\n\ndata: {"b":'), encode('2}\n')]);
    expect(chunks).to.deep.equal([{ a: 1 }]);
    expect(decoder).to.include({ done: false, events: 1 });
  });

  it('refuses more data without a line end than it buffers', () => {
    const decoder = new SseJsonDecoder(recorder([]), { createParser, maxEventChars: 1_000 });
    decoder.feed(encode(`data: ${'x'.repeat(900)}`), []);
    expect(() => decoder.feed(encode('y'.repeat(200)), [])).to.throw(ChatProviderError, /more than 1000 characters of stream data without a line end/);
  });
});
