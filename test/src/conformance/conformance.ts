/**
 * The provider conformance suite: one set of tests every `ChatProvider` must pass. A provider joins
 * by adding one adapter file in this folder (see `adapters.ts`) that turns each {@link Scenario} into
 * a provider primed to answer it.
 *
 * @module
 */
import {
  APIConnectionError,
  APIStatusError,
  APITimeoutError,
  ChatProviderError,
  generate,
  InvalidGenerationOptionError,
  UnsupportedGenerationOptionError,
  step,
  textPart,
  toolOk,
  type ChatProvider,
  type GenerationOptions,
  type Message,
  type StreamedMessagePart,
  type TokenUsage,
  type Toolset,
} from '@kosong/core';
import type { GenerationOptionName } from '@kosong/core/provider-kit';
import { expect } from 'chai';
import { structuredOutputCases } from './structured-output.js';

/** What the model should answer. */
export type Scenario =
  | { readonly kind: 'text'; readonly chunks: readonly string[] }
  | { readonly kind: 'think'; readonly think: readonly string[]; readonly text: readonly string[] }
  | { readonly kind: 'tool_calls'; readonly text: string; readonly calls: readonly { readonly id: string; readonly name: string; readonly args: string }[] }
  | { readonly kind: 'usage'; readonly text: string; readonly usage: TokenUsage }
  | { readonly kind: 'error'; readonly error: 'connection' | 'timeout' | 'status'; readonly status?: number; readonly retryAfterSeconds?: number }
  | { readonly kind: 'slow'; readonly chunks: readonly string[]; readonly delayMs: number };

/** A provider primed for one scenario, and the history to send it. */
export interface Primed {
  readonly provider: ChatProvider;
  readonly history: readonly Message[];
}

/** How a provider takes part in the suite. */
export interface ConformanceAdapter {
  readonly name: string;
  /** Whether the provider streams thinking (reasoning) as think parts. */
  readonly streamsThinking: boolean;
  /** Whether a 429 can carry `retry-after` (not through the echo DSL, for one). */
  readonly reportsRetryAfter: boolean;
  before?(): Promise<void>;
  after?(): Promise<void>;
  prime(scenario: Scenario): Primed | Promise<Primed>;
  /** For the abort test: resolves once the provider's transport saw the request cancelled (optional). */
  cancelled?(): Promise<boolean>;
  /**
   * For the generation-options tests (every provider must answer): the generation options the last
   * request of `provider` carried, read back in neutral terms from the wire body (or, for an offline
   * provider, from its recording). An option the request did not carry is left out.
   */
  sentGeneration?(provider: ChatProvider): GenerationOptions | Promise<GenerationOptions>;
  /**
   * For the structured-output tests: the JSON Schema the last request of `provider` asked the model's
   * output to match, read back from the wire body (or, for an offline provider, from its recording).
   */
  sentOutput?(provider: ChatProvider): Record<string, unknown> | undefined | Promise<Record<string, unknown> | undefined>;
}

/** Two values of each generation option: `asked` per call, `configured` on the provider with `withGeneration`. */
const GENERATION_SAMPLES: { readonly [K in GenerationOptionName]-?: { readonly asked: GenerationOptions[K]; readonly configured: GenerationOptions[K] } } = {
  maxOutputTokens: { asked: 77, configured: 33 },
  temperature: { asked: 0.5, configured: 0.25 },
  topP: { asked: 0.9, configured: 0.5 },
  stopSequences: { asked: ['STOP'], configured: ['HALT', 'END'] },
  seed: { asked: 5, configured: 6 },
  toolChoice: { asked: { type: 'tool', name: 'lookup' }, configured: 'none' },
  parallelToolCalls: { asked: false, configured: true },
};

const echoTool: Toolset = {
  tools: [{ name: 'lookup', description: 'Looks something up.', parameters: { type: 'object', properties: { q: { type: 'string' } } } }],
  handle: (call) => ({ toolCallId: call.id, returnValue: toolOk({ output: `found ${call.function.arguments ?? ''}` }) }),
};

const user = (text: string): Message => ({ role: 'user', content: [textPart(text)] });

/** Registers the suite for one adapter. */
export function conformanceSuite(adapter: ConformanceAdapter): void {
  describe(`ChatProvider conformance: ${adapter.name}`, function () {
    this.timeout(10_000);
    before(async () => adapter.before?.());
    after(async () => adapter.after?.());

    it('has a name and a model name, and withThinking returns a provider', async () => {
      const { provider } = await adapter.prime({ kind: 'text', chunks: ['x'] });
      expect(provider.name).to.be.a('string').and.not.equal('');
      expect(provider.modelName).to.be.a('string').and.not.equal('');
      const thinking = provider.withThinking('high');
      expect(thinking).to.not.equal(undefined);
      expect(thinking.generate).to.be.a('function');
    });

    it('withGeneration returns a configured copy; withThinking keeps the options', async () => {
      const { provider } = await adapter.prime({ kind: 'text', chunks: ['x'] });
      expect(provider.generation).to.deep.equal({});
      const configured = provider.withGeneration({ maxOutputTokens: 64 }).withGeneration({ temperature: 0.5 });
      expect(configured.generation).to.deep.equal({ maxOutputTokens: 64, temperature: 0.5 });
      expect(configured.withThinking('low').generation).to.deep.equal({ maxOutputTokens: 64, temperature: 0.5 });
      expect(provider.generation).to.deep.equal({});
    });

    it('streams text deltas in order and merges them into one text part', async () => {
      const chunks = ['Hello', ', ', 'world', '!'];
      const { provider, history } = await adapter.prime({ kind: 'text', chunks });
      const seen: StreamedMessagePart[] = [];
      const result = await generate({ provider, systemPrompt: 'Be brief.', history: [...history], onMessagePart: (p) => void seen.push(p) });
      expect(seen.filter((p) => p.type === 'text').map((p) => (p as { text: string }).text).join('')).to.equal('Hello, world!');
      expect(seen.filter((p) => p.type === 'text').length).to.be.at.least(2, 'the text arrived in several deltas');
      expect(result.message.content).to.deep.equal([textPart('Hello, world!')]);
    });

    it('streams thinking before the text, as think parts (where the provider has thinking)', async function () {
      if (!adapter.streamsThinking) this.skip(); // the provider has no reasoning stream
      const { provider, history } = await adapter.prime({ kind: 'think', think: ['Let me ', 'think.'], text: ['Answer.'] });
      const result = await generate({ provider, systemPrompt: '', history: [...history] });
      expect(result.message.content.map((p) => p.type)).to.deep.equal(['think', 'text']);
      expect((result.message.content[0] as { think: string }).think).to.equal('Let me think.');
    });

    it('streams tool calls: each complete, in order, with its arguments, dispatched by step()', async () => {
      const calls = [
        { id: 'call_1', name: 'lookup', args: '{"q":"alpha"}' },
        { id: 'call_2', name: 'lookup', args: '{"q":"beta"}' },
      ];
      const { provider, history } = await adapter.prime({ kind: 'tool_calls', text: 'Looking both up.', calls });
      const result = await step({ provider, systemPrompt: '', toolset: echoTool, history: [...history] });
      expect(result.toolCalls.map((c) => [c.id, c.function.name, c.function.arguments])).to.deep.equal(calls.map((c) => [c.id, c.name, c.args]));
      const results = await result.toolResults();
      expect(results.map((r) => r.returnValue.output)).to.deep.equal(['found {"q":"alpha"}', 'found {"q":"beta"}']);
    });

    it('reports token usage', async () => {
      const usage = { inputOther: 90, output: 12, inputCacheRead: 10, inputCacheCreation: 0 };
      const { provider, history } = await adapter.prime({ kind: 'usage', text: 'ok', usage });
      const result = await generate({ provider, systemPrompt: '', history: [...history] });
      expect(result.usage).to.deep.equal(usage);
    });

    for (const [error, check] of [
      ['connection', APIConnectionError.isInstance],
      ['timeout', APITimeoutError.isInstance],
    ] as const) {
      it(`raises ${error === 'connection' ? 'APIConnectionError' : 'APITimeoutError'} for a ${error} failure`, async () => {
        const { provider, history } = await adapter.prime({ kind: 'error', error });
        const caught = await generate({ provider, systemPrompt: '', history: [...history] }).catch((e: unknown) => e);
        expect(check(caught), String(caught)).to.equal(true);
        expect(ChatProviderError.isInstance(caught)).to.equal(true);
      });
    }

    it('raises APIStatusError with the status and retry-after for a 429', async () => {
      const { provider, history } = await adapter.prime({ kind: 'error', error: 'status', status: 429, retryAfterSeconds: 3 });
      const caught = await generate({ provider, systemPrompt: '', history: [...history] }).catch((e: unknown) => e);
      expect(APIStatusError.isInstance(caught), String(caught)).to.equal(true);
      expect(caught).to.include({ statusCode: 429 });
      if (adapter.reportsRetryAfter) expect(caught).to.include({ retryAfterSeconds: 3 });
    });

    it('raises APIStatusError with the status for a 500', async () => {
      const { provider, history } = await adapter.prime({ kind: 'error', error: 'status', status: 500 });
      const caught = await generate({ provider, systemPrompt: '', history: [...history] }).catch((e: unknown) => e);
      expect(APIStatusError.isInstance(caught), String(caught)).to.equal(true);
      expect(caught).to.include({ statusCode: 500 });
    });

    it('stops promptly on abort, with the signal reason, and the request is cancelled', async () => {
      const { provider, history } = await adapter.prime({ kind: 'slow', chunks: Array.from({ length: 50 }, () => 'tick '), delayMs: 40 });
      const controller = new AbortController();
      const reason = new Error('stop now');
      const seen: StreamedMessagePart[] = [];
      const started = performance.now();
      const pending = provider.generate('', [], [...history], { signal: controller.signal }).then(async (stream) => {
        for await (const part of stream) {
          seen.push(part);
          if (seen.length === 2) controller.abort(reason);
        }
      });
      const caught = await pending.catch((e: unknown) => e);
      expect(caught).to.equal(reason);
      expect(performance.now() - started).to.be.below(1_500); // the whole stream would take 2 s
      if (adapter.cancelled) expect(await adapter.cancelled()).to.equal(true);
    });

    it('stops before the request when the signal is already aborted', async () => {
      const { provider, history } = await adapter.prime({ kind: 'text', chunks: ['never'] });
      const controller = new AbortController();
      const reason = new Error('too late');
      controller.abort(reason);
      const caught = await provider
        .generate('', [], [...history], { signal: controller.signal })
        .then(async (stream) => {
          for await (const part of stream) void part;
          return 'streamed';
        })
        .catch((e: unknown) => e);
      expect(caught).to.equal(reason);
    });

    describe('generation options: each is sent as asked, or refused with an UnsupportedGenerationOptionError naming it', () => {
      /** Generates once; what was sent of `option`, or the typed refusal. */
      async function attempt(
        option: GenerationOptionName,
        configure: (provider: ChatProvider) => ChatProvider,
        generation: GenerationOptions | undefined,
      ): Promise<{ readonly sent: unknown } | { readonly refused: UnsupportedGenerationOptionError }> {
        if (!adapter.sentGeneration) expect.fail(`the ${adapter.name} adapter must implement sentGeneration() to show what the provider sent`);
        const primed = await adapter.prime({ kind: 'text', chunks: ['ok'] });
        const provider = configure(primed.provider);
        const caught = await provider
          .generate('', echoTool.tools, [...primed.history], generation ? { generation } : {})
          .then(async (stream) => {
            for await (const part of stream) void part;
          })
          .catch((e: unknown) => e);
        if (caught !== undefined) {
          expect(UnsupportedGenerationOptionError.isInstance(caught), `refused with ${String(caught)}`).to.equal(true);
          expect(caught).to.include({ option, provider: provider.name });
          return { refused: caught as UnsupportedGenerationOptionError };
        }
        return { sent: (await adapter.sentGeneration(provider))[option] };
      }

      for (const [name, { asked, configured }] of Object.entries(GENERATION_SAMPLES)) {
        const option = name as GenerationOptionName;
        it(`${option}: per call, on the provider, and per call over the provider's`, async () => {
          const perCall = await attempt(option, (p) => p, { [option]: asked });
          if ('sent' in perCall) expect(perCall.sent, 'per call').to.deep.equal(asked);
          const onProvider = await attempt(option, (p) => p.withGeneration({ [option]: configured }), undefined);
          if ('sent' in onProvider) expect(onProvider.sent, 'set with withGeneration').to.deep.equal(configured);
          const both = await attempt(option, (p) => p.withGeneration({ [option]: configured }), { [option]: asked });
          expect('sent' in both, 'refused per call, but not over the provider value (or the other way)').to.equal('sent' in perCall);
          if ('sent' in both) expect(both.sent, 'the per-call value wins').to.deep.equal(asked);
        });
      }

      it('refuses bad values, and a tool choice naming no offered tool, with an InvalidGenerationOptionError', async () => {
        const { provider, history } = await adapter.prime({ kind: 'text', chunks: ['ok'] });
        for (const generation of [{ temperature: Number.NaN }, { maxOutputTokens: 0 }, { toolChoice: { type: 'tool', name: 'nope' } }] as const) {
          const caught = await provider.generate('', echoTool.tools, [...history], { generation }).catch((e: unknown) => e);
          expect(InvalidGenerationOptionError.isInstance(caught), String(caught)).to.equal(true);
          expect(caught).to.include({ provider: provider.name });
        }
        expect(() => provider.withGeneration({ topP: 2 })).to.throw(InvalidGenerationOptionError);
        expect(provider.generation).to.deep.equal({}, 'withGeneration left the provider as it was');
      });
    });

    structuredOutputCases(adapter);

    it('passes the history it is given without changing it', async () => {
      const history = Object.freeze([Object.freeze(user('one')), Object.freeze({ role: 'assistant', content: [textPart('two')] } as Message)]);
      const { provider, history: primed } = await adapter.prime({ kind: 'text', chunks: ['ok'] });
      const full = [...history, ...primed];
      const before = structuredClone(full);
      await generate({ provider, systemPrompt: '', history: full });
      expect(full).to.deep.equal(before);
    });
  });
}
