import { expect } from 'chai';
import { setTimeout as sleep } from 'node:timers/promises';

import { textPart, type StreamedMessagePart } from '../message/parts.js';
import { APIConnectionError, APITimeoutError, ChatProviderError, EventStream, readEventStream, type EventStreamSource, type FinishReason, type StreamDecoder } from './index.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A response body the test writes to; aborting the request errors it, as `fetch` does. */
function testBody() {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
    },
  });
  return {
    body,
    write: (text: string) => controller.enqueue(encoder.encode(text)),
    end: () => controller.close(),
    fail: (error: unknown) => controller.error(error),
  };
}

/**
 * A line protocol: each line is a text part, `stop` gives the finish reason, `end` is the end event
 * (with the finish reason), a line starting with `bad` is malformed. Complete once a finish reason came.
 */
class LineDecoder implements StreamDecoder {
  readonly id = 'msg-1';
  readonly usage = undefined;
  finishReason: FinishReason | undefined;
  ended = false;

  feed(bytes: Uint8Array, out: StreamedMessagePart[]): void {
    for (const line of decoder.decode(bytes).split('\n')) {
      if (line === '' || this.ended) continue;
      if (line === 'end' || line === 'stop') {
        this.finishReason = 'stop';
        this.ended = line === 'end';
      } else if (line.startsWith('bad')) {
        throw new SyntaxError(`malformed: ${line}`);
      } else {
        out.push(textPart(line));
      }
    }
  }

  finish(out: StreamedMessagePart[]): void {
    if (this.finishReason === undefined) throw new APIConnectionError('The stream ended before the response was complete');
    out.push(textPart('.'));
  }
}

/** A source over `body`, recording what the loop does with the request. */
function sourceFor(body: ReturnType<typeof testBody>, options: { idleTimeoutMs?: number; signal?: AbortSignal } = {}) {
  const seen = { aborted: [] as unknown[], released: 0, converted: [] as unknown[] };
  const source: EventStreamSource = {
    body: body.body,
    signal: options.signal,
    idleTimeoutMs: options.idleTimeoutMs ?? 1_000,
    abortRequest: (reason) => {
      seen.aborted.push(reason);
      try {
        body.fail(reason);
      } catch {
        // the body is already closed
      }
    },
    release: () => void seen.released++,
    convertError: (error) => {
      seen.converted.push(error);
      return ChatProviderError.isInstance(error) ? error : new ChatProviderError(`converted: ${(error as Error).message}`);
    },
  };
  options.signal?.addEventListener('abort', () => body.fail(options.signal!.reason), { once: true });
  return { source, seen };
}

async function collect(parts: AsyncIterable<StreamedMessagePart>): Promise<string[]> {
  const texts: string[] = [];
  for await (const part of parts) texts.push((part as { text: string }).text);
  return texts;
}

async function failure(parts: AsyncIterable<StreamedMessagePart>, got: string[] = []): Promise<unknown> {
  try {
    for await (const part of parts) got.push((part as { text: string }).text);
  } catch (error) {
    return error;
  }
  return expect.fail('expected the stream to fail');
}

describe('provider kit: readEventStream', () => {
  it('yields the parts of every read in order, then the parts finish holds back; a body read to its end is released, not aborted', async () => {
    const body = testBody();
    const { source, seen } = sourceFor(body);
    body.write('a\nb\n');
    body.write('c\nstop\n');
    body.end();
    expect(await collect(readEventStream(source, new LineDecoder()))).to.deep.equal(['a', 'b', 'c', '.']);
    expect(seen.aborted).to.deep.equal([]);
    expect(seen.released).to.equal(1);
  });

  it('stops at the end event: nothing after it is read, the rest of the body is dropped in the background, then the request closed and released', async () => {
    const body = testBody();
    const { source, seen } = sourceFor(body);
    body.write('a\nend\nnot read\n');
    expect(await collect(readEventStream(source, new LineDecoder()))).to.deep.equal(['a', '.']);
    expect(seen.released).to.equal(0, 'released once the rest is read');
    body.write('more after the end');
    body.end();
    await sleep(10);
    expect(seen.released).to.equal(1);
    expect(seen.aborted).to.have.length(1);
    expect((seen.aborted[0] as Error).message).to.equal('The stream was complete');
  });

  it('idle timeout: the request is aborted with an APITimeoutError, which the stream throws; waiting time only counts, not the consumer\'s', async () => {
    const body = testBody();
    const { source, seen } = sourceFor(body, { idleTimeoutMs: 60 });
    body.write('a\nb\n');
    const got: string[] = [];
    const stream = readEventStream(source, new LineDecoder());
    const iterator = stream[Symbol.asyncIterator]();
    got.push(((await iterator.next()).value as { text: string }).text);
    await sleep(150); // the consumer is busy: the clock does not run
    got.push(((await iterator.next()).value as { text: string }).text);
    const error = await iterator.next().then(
      () => expect.fail('expected a timeout'),
      (e: unknown) => e,
    );
    expect(got).to.deep.equal(['a', 'b']);
    expect(APITimeoutError.isInstance(error), String(error)).to.equal(true);
    expect((error as Error).message).to.equal('The server sent nothing for 60 ms (stream timeout)');
    expect(APITimeoutError.isInstance(seen.aborted[0])).to.equal(true, 'the request was aborted with the timeout');
    expect(seen.converted).to.deep.equal([], 'a timeout is not converted');
    expect(seen.released).to.equal(1);
  });

  it('abort while waiting for bytes: the signal\'s reason, the request aborted and the body cancelled, released once', async () => {
    const body = testBody();
    const controller = new AbortController();
    const { source, seen } = sourceFor(body, { signal: controller.signal });
    body.write('a\n');
    const reason = new Error('user cancelled');
    setTimeout(() => controller.abort(reason), 20);
    const got: string[] = [];
    expect(await failure(readEventStream(source, new LineDecoder()), got)).to.equal(reason);
    expect(got).to.deep.equal(['a']);
    expect(seen.converted).to.deep.equal([], 'an abort is not converted');
    expect(seen.released).to.equal(1);
  });

  it('abort while the consumer holds a part: the next step throws the reason before anything more is read or yielded', async () => {
    const body = testBody();
    const controller = new AbortController();
    const { source, seen } = sourceFor(body);
    const reason = new Error('stop now');
    body.write('a\nb\nc\n');
    const got: string[] = [];
    const error = await failure(
      {
        [Symbol.asyncIterator]: () => {
          const inner = readEventStream({ ...source, signal: controller.signal }, new LineDecoder());
          return {
            next: async () => {
              const next = await inner.next();
              if (!next.done) controller.abort(reason);
              return next;
            },
            return: () => inner.return(),
          };
        },
      },
      got,
    );
    expect(error).to.equal(reason);
    expect(got).to.deep.equal(['a']);
    expect((seen.aborted[0] as Error).message).to.equal('The stream was not read to its end');
    expect(seen.released).to.equal(1);
  });

  it('a consumer that leaves early aborts the request and cancels the body', async () => {
    const body = testBody();
    const { source, seen } = sourceFor(body);
    body.write('a\nb\n');
    for await (const part of readEventStream(source, new LineDecoder())) {
      expect(part).to.deep.equal(textPart('a'));
      break;
    }
    expect(seen.aborted.map((reason) => (reason as Error).message)).to.deep.equal(['The stream was not read to its end']);
    expect(seen.released).to.equal(1);
  });

  it('a decoder that throws: the parts before the bad data come first, then the converted error; the request is aborted', async () => {
    const body = testBody();
    const { source, seen } = sourceFor(body);
    body.write('a\nbad data\nc\n');
    const got: string[] = [];
    const error = await failure(readEventStream(source, new LineDecoder()), got);
    expect(got).to.deep.equal(['a']);
    expect((error as Error).message).to.equal('converted: malformed: bad data');
    expect(seen.converted[0]).to.be.instanceOf(SyntaxError);
    expect(seen.aborted).to.have.length(1);
    expect(seen.released).to.equal(1);
  });

  it('a body that ends before the response is complete: what finish throws, converted', async () => {
    const body = testBody();
    const { source, seen } = sourceFor(body);
    body.write('a\n');
    body.end();
    const error = await failure(readEventStream(source, new LineDecoder()));
    expect(APIConnectionError.isInstance(error)).to.equal(true);
    expect(seen.converted).to.have.length(1);
    expect(seen.released).to.equal(1);
  });

  it('a read that fails (the connection broke): the converted error', async () => {
    const body = testBody();
    const { source } = sourceFor(body);
    body.write('a\n');
    setTimeout(() => body.fail(new TypeError('terminated')), 10);
    const got: string[] = [];
    expect(((await failure(readEventStream(source, new LineDecoder()), got)) as Error).message).to.equal('converted: terminated');
    expect(got).to.deep.equal(['a']);
  });

  it('no body: an APIConnectionError', async () => {
    const { source, seen } = sourceFor(testBody());
    const error = await failure(readEventStream({ ...source, body: null }, new LineDecoder()));
    expect(APIConnectionError.isInstance(error)).to.equal(true);
    expect((error as Error).message).to.equal('The response has no body');
    expect(seen.released).to.equal(1);
  });
});

describe('provider kit: EventStream', () => {
  it("has the decoder's facts and the trace id, and can be read only once", async () => {
    const body = testBody();
    const { source } = sourceFor(body);
    const lines = new LineDecoder();
    const stream = new EventStream({ ...source, what: 'A line stream', traceId: 'trace-9' }, lines);
    expect(stream.traceId).to.equal('trace-9');
    expect(stream.finishReason).to.equal(undefined);
    body.write('x\nstop\n');
    body.end();
    expect(await collect(stream)).to.deep.equal(['x', '.']);
    expect(stream.id).to.equal('msg-1');
    expect(stream.finishReason).to.equal('stop');
    const again = stream[Symbol.asyncIterator]();
    const error = await again.next().then(
      () => expect.fail('expected a failure'),
      (e: unknown) => e,
    );
    expect(ChatProviderError.isInstance(error)).to.equal(true);
    expect((error as Error).message).to.equal('A line stream can be read only once');
  });
});
