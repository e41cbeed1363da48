/**
 * The decoder with a small SSE parser of the test's own (core depends on no parser; the provider
 * packages test it with `eventsource-parser`'s).
 */
import { expect } from 'chai';

import { textPart, type StreamedMessagePart } from '../message/parts.js';
import { APIConnectionError, ChatProviderError, parseEventData, SseJsonDecoder, type CreateSseParser, type FinishReason, type StreamEventConverter } from './index.js';

/** `data:` and `event:` lines, events ended by a blank line; more than `maxBufferSize` characters without a line end is an error. */
const createParser: CreateSseParser = ({ onEvent, onError, maxBufferSize }) => {
  let pending = '';
  let data: string[] = [];
  let event: string | undefined;
  let failed = false;
  return {
    feed(chunk: string): void {
      if (failed) return;
      pending += chunk;
      let end: number;
      while ((end = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, end).replace(/\r$/, '');
        pending = pending.slice(end + 1);
        if (line === '') {
          if (data.length > 0) onEvent({ event, data: data.join('\n') });
          data = [];
          event = undefined;
        } else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
        else if (line.startsWith('event:')) event = line.slice(6).trim();
      }
      if (pending.length > maxBufferSize) {
        failed = true;
        onError({ type: 'max-buffer-size-exceeded' });
      }
    },
  };
};

/** Events `{text}` are parts, `{finish}` the finish reason, `{complete: true}` the end; `{error}` throws. */
class TestConverter implements StreamEventConverter {
  id: string | undefined;
  readonly usage = undefined;
  finishReason: FinishReason | undefined;
  complete = false;
  readonly events: unknown[] = [];

  constructor(private readonly endsWhenComplete: boolean) {}

  push(event: unknown, out: StreamedMessagePart[]): void {
    this.events.push(event);
    const data = event as { text?: string; finish?: FinishReason; id?: string; error?: string; complete?: boolean };
    if (data.error !== undefined) throw new ChatProviderError(`error event: ${data.error}`);
    if (data.id !== undefined) this.id = data.id;
    if (data.text !== undefined) out.push(textPart(data.text));
    if (data.finish !== undefined) this.finishReason = data.finish;
    if (data.complete === true && this.endsWhenComplete) this.complete = true;
  }

  end(out: StreamedMessagePart[]): void {
    if (this.finishReason === undefined) throw new APIConnectionError('no finish reason');
    out.push(textPart('<end>'));
  }
}

const encode = (text: string): Uint8Array => new TextEncoder().encode(text);
const texts = (parts: readonly StreamedMessagePart[]): string[] => parts.map((part) => (part as { text: string }).text);

describe('provider kit: SseJsonDecoder', () => {
  it('parses events split anywhere across reads into the converter, and writes its parts to the out list of the read that completes them', () => {
    const converter = new TestConverter(false);
    const decoder = new SseJsonDecoder(converter, { createParser });
    const whole = 'data: {"id":"m","text":"Hel"}\n\ndata: {"text":"lo"}\n\n: a comment\ndata: {"finish":"stop"}\n\n';
    const first: StreamedMessagePart[] = [];
    decoder.feed(encode(whole.slice(0, 20)), first);
    expect(first).to.deep.equal([]);
    const second: StreamedMessagePart[] = [];
    decoder.feed(encode(whole.slice(20)), second);
    expect(texts(second)).to.deep.equal(['Hel', 'lo']);
    expect(decoder.id).to.equal('m');
    expect(decoder.finishReason).to.equal('stop');
    expect(decoder.events).to.equal(3);
    expect(decoder.ended).to.equal(false, 'no end event: read to the end of the body');
    const last: StreamedMessagePart[] = [];
    decoder.finish(last);
    expect(texts(last)).to.deep.equal(['<end>']);
  });

  it('a multi-byte character split across reads is decoded whole', () => {
    const decoder = new SseJsonDecoder(new TestConverter(false), { createParser });
    const bytes = encode('data: {"text":"grüße"}\n\n');
    const out: StreamedMessagePart[] = [];
    decoder.feed(bytes.subarray(0, 17), out);
    decoder.feed(bytes.subarray(17), out);
    expect(texts(out)).to.deep.equal(['grüße']);
  });

  it('ends at `data: [DONE]`: events after it are counted, not read (even malformed ones)', () => {
    const converter = new TestConverter(false);
    const decoder = new SseJsonDecoder(converter, { createParser });
    const out: StreamedMessagePart[] = [];
    decoder.feed(encode('data: {"text":"a","finish":"stop"}\n\ndata: [DONE]\n\ndata: {"text":"b"}\n\ndata: not json\n\n'), out);
    expect(texts(out)).to.deep.equal(['a']);
    expect(decoder.done).to.equal(true);
    expect(decoder.ended).to.equal(true);
    expect(decoder.events).to.equal(4);
    expect(converter.events).to.have.length(1);
  });

  it('ends when the converter is complete: events after it in the same read are not read', () => {
    const converter = new TestConverter(true);
    const decoder = new SseJsonDecoder(converter, { createParser });
    const out: StreamedMessagePart[] = [];
    decoder.feed(encode('data: {"text":"a","finish":"stop","complete":true}\n\ndata: {"text":"after"}\n\n'), out);
    expect(texts(out)).to.deep.equal(['a']);
    expect(decoder.ended).to.equal(true);
    expect(decoder.done).to.equal(false);
    expect(converter.events).to.have.length(1);
  });

  it('data that is not JSON: a ChatProviderError quoting its start, after the parts of the events before it', () => {
    const decoder = new SseJsonDecoder(new TestConverter(false), { createParser });
    const out: StreamedMessagePart[] = [];
    expect(() => decoder.feed(encode(`data: {"text":"ok"}\n\ndata: {"text": ${'x'.repeat(300)}\n\n`), out)).to.throw(
      ChatProviderError,
      /^The server sent malformed stream data \(an event that is not JSON\): \{"text": x{191}…$/,
    );
    expect(texts(out)).to.deep.equal(['ok']);
  });

  it("what the converter throws, `feed` throws; a parse of the provider's own is used", () => {
    const parse = (event: { readonly event?: string | undefined; readonly data: string }): unknown =>
      event.event === 'error' ? { error: event.data } : parseEventData(event);
    const decoder = new SseJsonDecoder(new TestConverter(false), { createParser, parse });
    expect(() => decoder.feed(encode('event: error\ndata: overloaded, not JSON\n\n'), [])).to.throw(ChatProviderError, 'error event: overloaded, not JSON');
  });

  it('refuses more data without a line end than it buffers', () => {
    const decoder = new SseJsonDecoder(new TestConverter(false), { createParser, maxEventChars: 1_000 });
    decoder.feed(encode('data: {"text":"a"}\n\n'), []);
    expect(() => decoder.feed(encode('y'.repeat(1_200)), [])).to.throw(ChatProviderError, 'The server sent more than 1000 characters of stream data without a line end');
  });

  it('finish is the converter\'s end: an incomplete response throws', () => {
    const decoder = new SseJsonDecoder(new TestConverter(false), { createParser });
    decoder.feed(encode('data: {"text":"a"}\n\n'), []);
    expect(() => decoder.finish([])).to.throw(APIConnectionError, 'no finish reason');
  });
});
