import { getEventListeners } from 'node:events';

import {
  createMessage,
  imageURLPart,
  textPart,
  thinkPart,
  tokenUsage,
  toolCall,
  toolCallPart,
  type StreamedMessage,
  type StreamedMessagePart,
  type Tool,
} from '@kosong/core';
import { expect } from 'chai';
import sinon from 'sinon';

import { MockChatProvider } from '../index.js';

/** Freezes a value and everything reachable from it; returns it. */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const key of Reflect.ownKeys(value)) deepFreeze((value as Record<PropertyKey, unknown>)[key]);
    Object.freeze(value);
  }
  return value;
}

/** A stream of every kind of part (frozen: the provider must not change them). */
function sampleParts(): readonly StreamedMessagePart[] {
  return deepFreeze([
    textPart('Hello, '),
    textPart('world!'),
    thinkPart('thinking', 'sig'),
    imageURLPart('https://example.com/image.png'),
    toolCall('call-1', 'get_weather', null),
    toolCallPart('{"city":'),
    toolCallPart('"Beijing"}'),
    toolCallPart(null),
  ]);
}

/** Reads a whole stream into an array. */
async function collect(stream: StreamedMessage): Promise<StreamedMessagePart[]> {
  const parts: StreamedMessagePart[] = [];
  for await (const part of stream) parts.push(part);
  return parts;
}

/** Reads a stream, recording the parts seen so far and how it ended. */
async function consume(stream: StreamedMessage, got: StreamedMessagePart[]): Promise<{ error?: unknown }> {
  try {
    for await (const part of stream) got.push(part);
    return {};
  } catch (error) {
    return { error };
  }
}

/** Expects every element of `actual` to be the very same object as in `expected`, in order. */
function expectSameObjects(actual: readonly unknown[], expected: readonly unknown[]): void {
  expect(actual.length).to.equal(expected.length);
  actual.forEach((part, i) => expect(part, `part ${i}`).to.equal(expected[i]));
}

const history = [createMessage('user', 'Hi')];

describe('MockChatProvider', () => {
  describe('streaming (kosong test 19)', () => {
    it('streams its parts unchanged and in order', async () => {
      const parts = sampleParts();
      const snapshot = JSON.parse(JSON.stringify(parts)) as unknown;
      const provider = new MockChatProvider(parts);
      const streamed = await collect(await provider.generate('', [], history));
      expect(streamed).to.deep.equal(parts);
      expectSameObjects(streamed, parts);
      expect(JSON.parse(JSON.stringify(parts))).to.deep.equal(snapshot);
    });

    it('streams the same part objects again on every call, whatever the inputs', async () => {
      const parts = sampleParts();
      const provider = new MockChatProvider(parts);
      const first = await collect(await provider.generate('system A', [], history));
      const tool: Tool = { name: 'get_weather', description: 'Weather', parameters: { type: 'object' } };
      const second = await collect(await provider.generate('system B', [tool], [...history, createMessage('assistant', 'Yo')]));
      expectSameObjects(first, parts);
      expectSameObjects(second, parts);
    });

    it('streams nothing for an empty part list', async () => {
      expect(await collect(await new MockChatProvider([]).generate('', [], []))).to.deep.equal([]);
    });

    it('defaults: name and model "mock", no thinking effort; stream id "mock", no usage, finish reason or trace id', async () => {
      const provider = new MockChatProvider([textPart('x')]);
      expect(provider.name).to.equal('mock');
      expect(provider.modelName).to.equal('mock');
      expect(provider.thinkingEffort).to.equal(undefined);
      const stream = await provider.generate('', [], history);
      expect(stream.id).to.equal('mock');
      expect(stream.usage).to.equal(undefined);
      expect(stream.finishReason).to.equal(undefined);
      expect(stream.traceId).to.equal(undefined);
    });

    it('passes id, usage, finishReason and traceId to the stream; modelName to the provider', async () => {
      const usage = tokenUsage({ inputOther: 10, output: 2, inputCacheRead: 3 });
      const provider = new MockChatProvider([textPart('x')], {
        id: 'msg-42',
        usage,
        finishReason: 'tool_calls',
        traceId: 'trace-7',
        modelName: 'mock-large',
      });
      expect(provider.modelName).to.equal('mock-large');
      const stream = await provider.generate('', [], history);
      expect(stream.traceId, 'trace id available before iterating').to.equal('trace-7');
      await collect(stream);
      expect(stream.id).to.equal('msg-42');
      expect(stream.usage).to.equal(usage);
      expect(stream.finishReason).to.equal('tool_calls');
      expect(stream.traceId).to.equal('trace-7');
    });
  });

  describe('recording', () => {
    it('counts generate calls and records the last request', async () => {
      const provider = new MockChatProvider([textPart('x')]);
      expect(provider.generateCalls).to.equal(0);
      expect(provider.lastRequest).to.equal(undefined);

      const tools: Tool[] = [{ name: 'plus', description: 'Adds', parameters: { type: 'object' } }];
      await provider.generate('system 1', tools, history);
      expect(provider.generateCalls).to.equal(1);
      expect(provider.lastRequest).to.deep.equal({ systemPrompt: 'system 1', tools, history, generation: {} });
      expect(provider.lastRequest!.tools).to.equal(tools);
      expect(provider.lastRequest!.history).to.equal(history);

      const history2 = [...history, createMessage('assistant', 'Hello')];
      await provider.generate('system 2', [], history2);
      expect(provider.generateCalls).to.equal(2);
      expect(provider.lastRequest!.systemPrompt).to.equal('system 2');
      expect(provider.lastRequest!.tools).to.deep.equal([]);
      expect(provider.lastRequest!.history).to.equal(history2);
    });

    it('counts and records calls that fail', async () => {
      const provider = new MockChatProvider([textPart('x')], { generateError: new Error('down') });
      await provider.generate('s', [], history).catch(() => undefined);
      expect(provider.generateCalls).to.equal(1);
      expect(provider.lastRequest?.systemPrompt).to.equal('s');
    });
  });

  describe('withThinking', () => {
    it('returns a new provider with the effort set and the same parts and options', async () => {
      const parts = sampleParts();
      const provider = new MockChatProvider(parts, { id: 'msg-1', modelName: 'm' });
      const thinking = provider.withThinking('high');
      expect(thinking).to.be.instanceOf(MockChatProvider);
      expect(thinking).to.not.equal(provider);
      expect(thinking.thinkingEffort).to.equal('high');
      expect(provider.thinkingEffort, 'the original is unchanged').to.equal(undefined);
      expect(thinking.name).to.equal('mock');
      expect(thinking.modelName).to.equal('m');
      expect(thinking.parts).to.equal(parts);

      const stream = await thinking.generate('', [], history);
      expectSameObjects(await collect(stream), parts);
      expect(stream.id).to.equal('msg-1');
    });

    it('can be changed again, and counts its own calls', async () => {
      const provider = new MockChatProvider([textPart('x')]);
      await provider.generate('', [], history);
      const off = provider.withThinking('max').withThinking('off');
      expect(off.thinkingEffort).to.equal('off');
      expect(off.generateCalls).to.equal(0);
      expect(off.lastRequest).to.equal(undefined);
      expect(provider.generateCalls).to.equal(1);
    });
  });

  describe('failures', () => {
    it('generateError rejects generate with that very value', async () => {
      const error = new Error('connection refused');
      const provider = new MockChatProvider([textPart('x')], { generateError: error });
      let caught: unknown;
      await provider.generate('', [], history).catch((e: unknown) => (caught = e));
      expect(caught).to.equal(error);

      const withString = new MockChatProvider([textPart('x')], { generateError: 'plain' });
      await withString.generate('', [], history).then(
        () => expect.fail('expected generate to reject'),
        (e: unknown) => expect(e).to.equal('plain'),
      );
    });

    for (const n of [0, 1, 3]) {
      it(`errorAfter ${n}: yields the first ${n} parts, then throws the error`, async () => {
        const parts = sampleParts().slice(0, 4);
        const error = new Error('stream broke');
        const provider = new MockChatProvider(parts, { errorAfter: { parts: n, error } });
        const stream = await provider.generate('', [], history);
        const got: StreamedMessagePart[] = [];
        const outcome = await consume(stream, got);
        expect(outcome.error).to.equal(error);
        expectSameObjects(got, parts.slice(0, n));
      });
    }

    for (const extra of [0, 2]) {
      it(`errorAfter length + ${extra}: yields every part, then throws the error`, async () => {
        const parts = sampleParts().slice(0, 3);
        const error = new Error('stream broke at the end');
        const provider = new MockChatProvider(parts, { errorAfter: { parts: parts.length + extra, error } });
        const got: StreamedMessagePart[] = [];
        const outcome = await consume(await provider.generate('', [], history), got);
        expect(outcome.error).to.equal(error);
        expectSameObjects(got, parts);
      });
    }

    it('errorAfter 0 with no parts still throws', async () => {
      const error = new Error('empty and broken');
      const provider = new MockChatProvider([], { errorAfter: { parts: 0, error } });
      const got: StreamedMessagePart[] = [];
      expect((await consume(await provider.generate('', [], history), got)).error).to.equal(error);
      expect(got).to.deep.equal([]);
    });

    it('throws on every iteration of every call', async () => {
      const error = new Error('again');
      const provider = new MockChatProvider([textPart('a'), textPart('b')], { errorAfter: { parts: 1, error } });
      for (let i = 0; i < 2; i++) {
        const got: StreamedMessagePart[] = [];
        expect((await consume(await provider.generate('', [], history), got)).error).to.equal(error);
        expect(got).to.have.length(1);
      }
    });
  });

  describe('delayMs', () => {
    let clock: sinon.SinonFakeTimers | undefined;
    afterEach(() => {
      clock?.restore();
      clock = undefined;
    });

    it('waits delayMs before each part', async () => {
      clock = sinon.useFakeTimers();
      const parts = sampleParts().slice(0, 3);
      const provider = new MockChatProvider(parts, { delayMs: 50 });
      const got: StreamedMessagePart[] = [];
      let finished = false;
      const done = consume(await provider.generate('', [], history), got).then((outcome) => {
        finished = true;
        return outcome;
      });

      await clock.tickAsync(49);
      expect(got).to.have.length(0);
      await clock.tickAsync(1);
      expect(got).to.have.length(1);
      await clock.tickAsync(49);
      expect(got).to.have.length(1);
      await clock.tickAsync(1);
      expect(got).to.have.length(2);
      await clock.tickAsync(49);
      expect(got).to.have.length(2);
      expect(finished).to.equal(false);
      await clock.tickAsync(1);
      expect(got).to.have.length(3);
      expect(await done).to.deep.equal({});
      expect(finished).to.equal(true);
      expectSameObjects(got, parts);
    });

    it('delayMs 0 still yields every part (via a timer)', async () => {
      const parts = sampleParts();
      const provider = new MockChatProvider(parts, { delayMs: 0 });
      expectSameObjects(await collect(await provider.generate('', [], history)), parts);
    });

    it('removes its abort listeners once the delays are over', async () => {
      const controller = new AbortController();
      const provider = new MockChatProvider(sampleParts().slice(0, 3), { delayMs: 1 });
      await collect(await provider.generate('', [], history, { signal: controller.signal }));
      expect(getEventListeners(controller.signal, 'abort')).to.have.length(0);
    });
  });

  describe('abort', () => {
    it('by default ends a pending delay promptly with the signal reason', async () => {
      const parts = sampleParts().slice(0, 3);
      const provider = new MockChatProvider(parts, { delayMs: 30_000 });
      const controller = new AbortController();
      const reason = new Error('user pressed ctrl-c');
      const stream = await provider.generate('', [], history, { signal: controller.signal });

      const started = performance.now();
      setTimeout(() => controller.abort(reason), 20);
      const got: StreamedMessagePart[] = [];
      const outcome = await consume(stream, got);
      const elapsed = performance.now() - started;

      expect(outcome.error).to.equal(reason);
      expect(got).to.deep.equal([]);
      // Without a prompt abort the stream would wait out at least the first 30 s delay (a loaded machine may take seconds).
      expect(elapsed).to.be.lessThan(5_000);
      expect(getEventListeners(controller.signal, 'abort')).to.have.length(0);
    });

    it('by default throws the reason before the next part when aborted between parts (no delay)', async () => {
      const parts = sampleParts();
      const provider = new MockChatProvider(parts);
      const controller = new AbortController();
      const reason = new Error('stop');
      const got: StreamedMessagePart[] = [];
      let caught: unknown;
      try {
        for await (const part of await provider.generate('', [], history, { signal: controller.signal })) {
          got.push(part);
          if (got.length === 2) controller.abort(reason);
        }
      } catch (error) {
        caught = error;
      }
      expect(caught).to.equal(reason);
      expectSameObjects(got, parts.slice(0, 2));
    });

    it('uses the default AbortError reason when abort() is called without one', async () => {
      const provider = new MockChatProvider([textPart('a')], { delayMs: 1000 });
      const controller = new AbortController();
      const stream = await provider.generate('', [], history, { signal: controller.signal });
      setTimeout(() => controller.abort(), 5);
      const outcome = await consume(stream, []);
      expect(outcome.error).to.equal(controller.signal.reason);
      expect((outcome.error as Error).name).to.equal('AbortError');
    });

    it('an already-aborted signal rejects generate with its reason', async () => {
      const provider = new MockChatProvider([textPart('a')]);
      const reason = new Error('too late');
      let caught: unknown;
      await provider.generate('', [], history, { signal: AbortSignal.abort(reason) }).catch((e: unknown) => (caught = e));
      expect(caught).to.equal(reason);
      expect(provider.generateCalls).to.equal(1);
    });

    it("with onAbort 'ignore' the stream goes on to the end despite an abort", async () => {
      const parts = sampleParts().slice(0, 4);
      const provider = new MockChatProvider(parts, { delayMs: 10, onAbort: 'ignore', finishReason: 'stop' });
      const controller = new AbortController();
      const stream = await provider.generate('', [], history, { signal: controller.signal });
      const got: StreamedMessagePart[] = [];
      let caught: unknown;
      try {
        for await (const part of stream) {
          got.push(part);
          if (got.length === 1) controller.abort(new Error('ignored'));
        }
      } catch (error) {
        caught = error;
      }
      expect(controller.signal.aborted).to.equal(true);
      expect(caught).to.equal(undefined);
      expectSameObjects(got, parts);
      expect(stream.finishReason).to.equal('stop');
    });

    it("with onAbort 'ignore' an already-aborted signal does not reject generate", async () => {
      const parts = sampleParts().slice(0, 2);
      const provider = new MockChatProvider(parts, { onAbort: 'ignore' });
      const stream = await provider.generate('', [], history, { signal: AbortSignal.abort(new Error('ignored')) });
      expectSameObjects(await collect(stream), parts);
    });
  });
});
