import {
  APIConnectionError,
  APIStatusError,
  APITimeoutError,
  ChatProviderError,
  textPart,
  tokenUsage,
  toolCall,
  toolCallPart,
  type StreamedMessagePart,
} from '@kosong/core';
import { expect } from 'chai';
import { inspect } from 'node:util';

import {
  CHAOS_FAULTS,
  ChaosChatProvider,
  chaosConfigFromEnv,
  MockChatProvider,
  ScriptedEchoChatProvider,
  type ChaosConfig,
  type ChaosFault,
  type ChaosFaultEvent,
} from '../index.js';
import { collect, drain, rejection } from './support.js';

const FIVE_PARTS: readonly StreamedMessagePart[] = Object.freeze(['a', 'b', 'c', 'd', 'e'].map((t) => Object.freeze(textPart(t))));

/**
 * What one generate call on `provider` came to: `ok`, `disconnect@<parts seen>`, or the fault
 * (`connection`, `timeout`, or the status code).
 */
async function outcome(provider: ChaosChatProvider): Promise<string> {
  let stream;
  try {
    stream = await provider.generate('', [], []);
  } catch (error) {
    if (APIStatusError.isInstance(error)) return String(error.statusCode);
    if (APIConnectionError.isInstance(error)) return 'connection';
    if (APITimeoutError.isInstance(error)) return 'timeout';
    throw error;
  }
  const { parts, error } = await drain(stream);
  if (error === undefined) return 'ok';
  expect(APIConnectionError.isInstance(error), String(error)).to.equal(true);
  return `disconnect@${parts.length}`;
}

/** The outcomes of `n` calls. */
async function outcomes(provider: ChaosChatProvider, n: number): Promise<string[]> {
  const result: string[] = [];
  for (let i = 0; i < n; i++) result.push(await outcome(provider));
  return result;
}

/** A chaos provider over a fresh five-part mock. */
function chaos(config: ChaosConfig, parts: readonly StreamedMessagePart[] = FIVE_PARTS): { provider: ChaosChatProvider; inner: MockChatProvider } {
  const inner = new MockChatProvider(parts);
  return { provider: new ChaosChatProvider(inner, config), inner };
}

/** Counts of each label. */
function tally(labels: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const label of labels) counts.set(label, (counts.get(label) ?? 0) + 1);
  return counts;
}

describe('ChaosChatProvider', () => {
  describe('determinism', () => {
    it('seed 2024 gives the same fault sequence in every run (pinned)', async () => {
      const { provider } = chaos({ seed: 2024, errorProbability: 0.5, corruptToolCallProbability: 0 });
      // Any change here breaks reproducibility of recorded chaos runs: change it knowingly.
      expect(await outcomes(provider, 24)).to.deep.equal([
        '502', 'ok', 'disconnect@0', '503', '429', 'ok', 'ok', 'connection', 'timeout', 'ok', 'ok', 'ok',
        '502', 'ok', 'ok', 'ok', 'timeout', 'ok', '429', '502', 'disconnect@1', 'ok', 'ok', 'connection',
      ]);
    });

    it('the same seed gives the same sequence; other seeds give other sequences', async () => {
      const config = { errorProbability: 0.5, corruptToolCallProbability: 0 };
      const a = await outcomes(chaos({ ...config, seed: 7 }).provider, 60);
      const b = await outcomes(chaos({ ...config, seed: 7 }).provider, 60);
      const c = await outcomes(chaos({ ...config, seed: 8 }).provider, 60);
      expect(a).to.deep.equal(b);
      expect(c).to.not.deep.equal(a);
      expect(new Set(a).size, 'a varied sequence').to.be.greaterThan(5);
    });

    it("a call's fate depends only on the seed and its index, not on how earlier streams were read", async () => {
      const config = { seed: 99, errorProbability: 0.6, corruptToolCallProbability: 0 };
      const read = await outcomes(chaos(config).provider, 40);
      const { provider: unread } = chaos(config);
      const generateOutcomes: string[] = [];
      for (let i = 0; i < 40; i++) {
        // Leave every stream unread: the next call must not be affected.
        generateOutcomes.push(
          await unread.generate('', [], []).then(
            () => 'stream',
            (error: unknown) => (APIStatusError.isInstance(error) ? String(error.statusCode) : (error as Error).name),
          ),
        );
      }
      const expected = read.map((label) =>
        label === 'ok' || label.startsWith('disconnect') ? 'stream' : label === 'connection' ? 'APIConnectionError' : label === 'timeout' ? 'APITimeoutError' : label,
      );
      expect(generateOutcomes).to.deep.equal(expected);
      expect(unread.calls).to.equal(40);
    });

    it('without a seed it draws one, and that seed replays the run', async () => {
      const config = { errorProbability: 0.5, corruptToolCallProbability: 0 };
      const { provider } = chaos(config);
      expect(provider.seed).to.be.a('number');
      expect(Number.isInteger(provider.seed) && provider.seed >= 0 && provider.seed < 2 ** 32).to.equal(true);
      const first = await outcomes(provider, 30);
      expect(await outcomes(chaos({ ...config, seed: provider.seed }).provider, 30)).to.deep.equal(first);
    });
  });

  describe('each fault at probability 1', () => {
    const expectations: ReadonlyArray<[ChaosFault, (error: unknown) => void]> = [
      ['connection', (e) => expect(APIConnectionError.isInstance(e) && !APIStatusError.isInstance(e)).to.equal(true)],
      ['timeout', (e) => expect(e).to.be.instanceOf(APITimeoutError)],
      ['429', (e) => expect([(e as APIStatusError).statusCode, (e as APIStatusError).retryAfterSeconds]).to.deep.equal([429, 7])],
      ['500', (e) => expect([(e as APIStatusError).statusCode, (e as APIStatusError).retryAfterSeconds]).to.deep.equal([500, undefined])],
      ['502', (e) => expect([(e as APIStatusError).statusCode, (e as APIStatusError).retryAfterSeconds]).to.deep.equal([502, undefined])],
      ['503', (e) => expect([(e as APIStatusError).statusCode, (e as APIStatusError).retryAfterSeconds]).to.deep.equal([503, undefined])],
    ];
    for (const [fault, check] of expectations) {
      it(`${fault}: generate rejects every time, without calling the wrapped provider`, async () => {
        const events: ChaosFaultEvent[] = [];
        const { provider, inner } = chaos({ errorProbability: 1, faults: { [fault]: 1 }, retryAfterSeconds: 7, seed: 3, onFault: (e) => events.push(e) });
        for (let call = 0; call < 3; call++) {
          const error = await rejection(provider.generate('', [], []));
          expect(ChatProviderError.isInstance(error)).to.equal(true);
          expect((error as Error).message).to.contain('injected by ChaosChatProvider');
          if (fault.match(/^\d+$/)) {
            expect(error).to.be.instanceOf(APIStatusError);
            expect((error as APIStatusError).requestId).to.equal(`chaos-3-${call}`);
          }
          check(error);
        }
        expect(inner.generateCalls).to.equal(0);
        expect(events).to.deep.equal([0, 1, 2].map((call) => ({ call, fault })));
      });
    }

    it('disconnect: the stream yields the first 0–3 parts of the response, then throws APIConnectionError', async () => {
      const seen = new Set<number>();
      for (let seed = 0; seed < 40; seed++) {
        const events: ChaosFaultEvent[] = [];
        const { provider, inner } = chaos({ seed, errorProbability: 1, faults: { disconnect: 1 }, onFault: (e) => events.push(e) });
        const stream = await provider.generate('', [], []);
        expect(inner.generateCalls).to.equal(1);
        expect(events, 'reported when it strikes, not before').to.deep.equal([]);
        const { parts, error } = await drain(stream);
        expect(error).to.be.instanceOf(APIConnectionError);
        expect((error as Error).message).to.equal('Connection lost mid-stream (injected by ChaosChatProvider)');
        expect(parts.length).to.be.at.most(3);
        parts.forEach((part, i) => expect(part).to.equal(FIVE_PARTS[i]));
        expect(events).to.deep.equal([{ call: 0, fault: 'disconnect' }]);
        seen.add(parts.length);
      }
      expect([...seen].sort()).to.deep.equal([0, 1, 2, 3]);
    });

    it('disconnect on a response shorter than the cut: every part, then the error', async () => {
      let fullThenError = 0;
      for (let seed = 0; seed < 20; seed++) {
        const { provider } = chaos({ seed, errorProbability: 1, faults: { disconnect: 1 } }, [textPart('only')]);
        const { parts, error } = await drain(await provider.generate('', [], []));
        expect(error).to.be.instanceOf(APIConnectionError);
        if (parts.length === 1) fullThenError++;
      }
      expect(fullThenError).to.be.greaterThan(0);
    });
  });

  describe('tool-call corruption', () => {
    const parts: readonly StreamedMessagePart[] = Object.freeze([
      Object.freeze(textPart('text ending in }')),
      Object.freeze(toolCall('c1', 'f', '{"a":1}', { sig: 'x' })),
      Object.freeze(toolCall('c2', 'g', null)),
      Object.freeze(toolCall('c3', 'h', '{"a":')),
      Object.freeze(toolCallPart('1}')),
      Object.freeze(toolCallPart(null)),
      Object.freeze(toolCallPart('"open"')),
    ]);

    it('at probability 1 drops the trailing } of every tool call and fragment ending in one; nothing else changes', async () => {
      const events: ChaosFaultEvent[] = [];
      const { provider } = chaos({ seed: 1, errorProbability: 0, corruptToolCallProbability: 1, onFault: (e) => events.push(e) }, parts);
      const streamed = await collect(await provider.generate('', [], []));
      expect(streamed).to.deep.equal([
        textPart('text ending in }'),
        toolCall('c1', 'f', '{"a":1', { sig: 'x' }),
        toolCall('c2', 'g', null),
        toolCall('c3', 'h', '{"a":'),
        toolCallPart('1'),
        toolCallPart(null),
        toolCallPart('"open"'),
      ]);
      for (const i of [0, 2, 3, 5, 6]) expect(streamed[i], `part ${i} passed through`).to.equal(parts[i]);
      expect(parts[1]).to.deep.equal(toolCall('c1', 'f', '{"a":1}', { sig: 'x' }));
      expect(events).to.deep.equal([
        { call: 0, fault: 'corrupt_tool_call' },
        { call: 0, fault: 'corrupt_tool_call' },
      ]);
    });

    it('at probability 0 streams the very same parts', async () => {
      const { provider } = chaos({ seed: 1, errorProbability: 0, corruptToolCallProbability: 0 }, parts);
      const streamed = await collect(await provider.generate('', [], []));
      streamed.forEach((part, i) => expect(part).to.equal(parts[i]));
    });

    it('passes id, usage, finish reason and trace id through', async () => {
      const usage = tokenUsage({ output: 3 });
      const inner = new MockChatProvider(parts, { id: 'm-1', usage, finishReason: 'tool_calls', traceId: 't-1' });
      const stream = await new ChaosChatProvider(inner, { seed: 1, errorProbability: 0, corruptToolCallProbability: 0.5 }).generate('', [], []);
      expect(stream.traceId).to.equal('t-1');
      await collect(stream);
      expect([stream.id, stream.usage, stream.finishReason]).to.deep.equal(['m-1', usage, 'tool_calls']);
    });
  });

  describe('rates', () => {
    it('faults hit about errorProbability of the calls, spread evenly over the kinds by default', async () => {
      const n = 7000;
      const { provider } = chaos({ seed: 11, errorProbability: 0.3, corruptToolCallProbability: 0 }, [textPart('x'), textPart('y'), textPart('z'), textPart('w')]);
      const counts = tally((await outcomes(provider, n)).map((label) => (label.startsWith('disconnect') ? 'disconnect' : label)));
      expect(counts.get('ok')! / n).to.be.closeTo(0.7, 0.02);
      for (const fault of CHAOS_FAULTS) expect(counts.get(fault)! / n, fault).to.be.closeTo(0.3 / 7, 0.01);
    });

    it('weights set the mix; faults left out never happen', async () => {
      const n = 4000;
      const { provider } = chaos({ seed: 5, errorProbability: 0.6, faults: { '429': 3, timeout: 1 }, corruptToolCallProbability: 0 });
      const counts = tally(await outcomes(provider, n));
      expect([...counts.keys()].sort()).to.deep.equal(['429', 'ok', 'timeout']);
      expect(counts.get('429')! / n).to.be.closeTo(0.45, 0.025);
      expect(counts.get('timeout')! / n).to.be.closeTo(0.15, 0.02);
    });

    it('corruption hits about corruptToolCallProbability of the candidate parts', async () => {
      const parts = [toolCall('c', 'f', '{"a":1}'), toolCallPart('}'), textPart('}')];
      const { provider } = chaos({ seed: 17, errorProbability: 0, corruptToolCallProbability: 0.25 }, parts);
      let corrupted = 0;
      const calls = 1500;
      for (let i = 0; i < calls; i++) {
        const [call, fragment, text] = await collect(await provider.generate('', [], []));
        if (call !== parts[0]) corrupted++;
        if (fragment !== parts[1]) corrupted++;
        expect(text).to.equal(parts[2]);
      }
      expect(corrupted / (2 * calls)).to.be.closeTo(0.25, 0.03);
    });
  });

  describe('identity', () => {
    it('name delegates; modelName is chaos(inner) while any probability is above 0', () => {
      const inner = new MockChatProvider([], { modelName: 'm-large' });
      expect(new ChaosChatProvider(inner, { errorProbability: 0.1, corruptToolCallProbability: 0 }).modelName).to.equal('chaos(m-large)');
      expect(new ChaosChatProvider(inner, { errorProbability: 0, corruptToolCallProbability: 0.1 }).modelName).to.equal('chaos(m-large)');
      expect(new ChaosChatProvider(inner).modelName, 'defaults 0.3 / 0.1').to.equal('chaos(m-large)');
      const calm = new ChaosChatProvider(inner, { errorProbability: 0, corruptToolCallProbability: 0 });
      expect(calm.modelName).to.equal('m-large');
      expect(calm.name).to.equal('mock');
      expect(calm.inner).to.equal(inner);
    });

    it('thinkingEffort delegates; withThinking wraps the inner copy with the same config and seed', async () => {
      const inner = new MockChatProvider(FIVE_PARTS, {}, 'low');
      const config = { errorProbability: 0.5, corruptToolCallProbability: 0 };
      const provider = new ChaosChatProvider(inner, config);
      expect(provider.thinkingEffort).to.equal('low');
      const first = await outcomes(provider, 12);

      const copy = provider.withThinking('max');
      expect(copy).to.be.instanceOf(ChaosChatProvider).and.not.equal(provider);
      expect(copy.thinkingEffort).to.equal('max');
      expect(provider.thinkingEffort).to.equal('low');
      expect(copy.inner).to.be.instanceOf(MockChatProvider).and.not.equal(inner);
      expect(copy.seed).to.equal(provider.seed);
      expect(copy.calls).to.equal(0);
      expect(await outcomes(copy, 12), 'the copy replays the sequence from the start').to.deep.equal(first);
    });
  });

  describe('wrapping other providers', () => {
    it('a fault before the request keeps the scripted provider’s script for the retry', async () => {
      const inner = new ScriptedEchoChatProvider(['text: one', 'text: two', 'text: three']);
      const provider = new ChaosChatProvider(inner, { seed: 4, errorProbability: 0.5, faults: { connection: 1, '503': 1 } });
      const texts: string[] = [];
      let faults = 0;
      while (texts.length < 3) {
        try {
          const parts = await collect(await provider.generate('', [], []));
          texts.push((parts[0] as { text: string }).text);
        } catch (error) {
          expect(ChatProviderError.isInstance(error)).to.equal(true);
          faults++;
        }
      }
      expect(texts).to.deep.equal(['one', 'two', 'three']);
      expect(faults).to.be.greaterThan(0);
      expect(inner.remaining).to.equal(0);
    });

    it('an already-aborted signal rejects with its reason, draws nothing and calls nothing', async () => {
      const { provider, inner } = chaos({ seed: 1, errorProbability: 1 });
      const reason = new Error('stop');
      expect(await rejection(provider.generate('', [], [], { signal: AbortSignal.abort(reason) }))).to.equal(reason);
      expect([provider.calls, inner.generateCalls]).to.deep.equal([0, 0]);
    });

    it('passes the signal on to the wrapped provider', async () => {
      const inner = new MockChatProvider(FIVE_PARTS, { delayMs: 5000 });
      const provider = new ChaosChatProvider(inner, { seed: 1, errorProbability: 0, corruptToolCallProbability: 0 });
      const controller = new AbortController();
      const reason = new Error('enough');
      const stream = await provider.generate('', [], [], { signal: controller.signal });
      setTimeout(() => controller.abort(reason), 5);
      expect((await drain(stream)).error).to.equal(reason);
    });
  });

  describe('config', () => {
    const invalid: ReadonlyArray<[ChaosConfig, string]> = [
      [{ errorProbability: 1.5 }, 'ChaosConfig.errorProbability must be between 0 and 1, got 1.5'],
      [{ errorProbability: -0.1 }, 'ChaosConfig.errorProbability must be between 0 and 1, got -0.1'],
      [{ errorProbability: Number.NaN }, 'ChaosConfig.errorProbability must be between 0 and 1, got NaN'],
      [{ corruptToolCallProbability: 2 }, 'ChaosConfig.corruptToolCallProbability must be between 0 and 1, got 2'],
      [{ retryAfterSeconds: -1 }, 'ChaosConfig.retryAfterSeconds must be a finite number >= 0, got -1'],
      [{ faults: { '418': 1 } as Partial<Record<ChaosFault, number>> }, "ChaosConfig.faults: unknown fault '418' (known: connection, timeout, 429, 500, 502, 503, disconnect)"],
      [{ faults: { timeout: -1 } }, "ChaosConfig.faults['timeout'] must be a finite number >= 0, got -1"],
      [{ faults: {} }, 'ChaosConfig.faults must give at least one fault a positive weight when errorProbability > 0'],
      [{ faults: { timeout: 0 } }, 'ChaosConfig.faults must give at least one fault a positive weight when errorProbability > 0'],
      [{ seed: Number.POSITIVE_INFINITY }, 'ChaosConfig.seed must be a finite number, got Infinity'],
    ];
    for (const [config, message] of invalid) {
      it(`rejects ${inspect(config)}`, () => {
        expect(() => new ChaosChatProvider(new MockChatProvider([]), config)).to.throw(RangeError, message);
      });
    }

    it('no faults are fine when errorProbability is 0', () => {
      expect(() => new ChaosChatProvider(new MockChatProvider([]), { errorProbability: 0, faults: {} })).to.not.throw();
    });
  });

  describe('chaosConfigFromEnv', () => {
    it('reads every CHAOS_ variable', () => {
      const config = chaosConfigFromEnv({
        CHAOS_ERROR_PROBABILITY: '0.25',
        CHAOS_ERROR_TYPES: '429, 503,429,Disconnect',
        CHAOS_RETRY_AFTER: '5',
        CHAOS_SEED: '1234',
        CHAOS_CORRUPT_TOOL_CALL_PROBABILITY: '0',
      });
      expect(config).to.deep.equal({
        errorProbability: 0.25,
        faults: { '429': 2, '503': 1, disconnect: 1 },
        retryAfterSeconds: 5,
        seed: 1234,
        corruptToolCallProbability: 0,
      });
    });

    it('leaves unset or empty variables to the defaults', () => {
      expect(chaosConfigFromEnv({})).to.deep.equal({});
      expect(chaosConfigFromEnv({ CHAOS_SEED: '', CHAOS_ERROR_TYPES: ' ' })).to.deep.equal({});
    });

    it('names the variable of a bad value', () => {
      expect(() => chaosConfigFromEnv({ CHAOS_ERROR_PROBABILITY: 'lots' })).to.throw(RangeError, "CHAOS_ERROR_PROBABILITY must be a number, got 'lots'");
      expect(() => chaosConfigFromEnv({ CHAOS_ERROR_TYPES: '429,teapot' })).to.throw(RangeError, "CHAOS_ERROR_TYPES: unknown fault 'teapot'");
    });

    it('a config from the environment drives a provider', async () => {
      const provider = new ChaosChatProvider(new MockChatProvider(FIVE_PARTS), chaosConfigFromEnv({ CHAOS_ERROR_PROBABILITY: '1', CHAOS_ERROR_TYPES: '429', CHAOS_RETRY_AFTER: '9', CHAOS_SEED: '1' }));
      const error = await rejection(provider.generate('', [], []));
      expect([(error as APIStatusError).statusCode, (error as APIStatusError).retryAfterSeconds]).to.deep.equal([429, 9]);
      expect(provider.seed).to.equal(1);
    });
  });
});
