import {
  APIConnectionError,
  APIEmptyResponseError,
  definePlugin,
  imageURLPart,
  Kernel,
  step,
  textPart,
  thinkPart,
  toolCall,
  toolCallPart,
  type CleanupEvent,
  type Message,
  type StreamedMessagePart,
  type ToolResult,
} from '@kosong/core';
import type { StepHookName } from '@kosong/core/runtime';
import { MockChatProvider } from '@kosong/provider-echo';
import { expect } from 'chai';
import fc from 'fast-check';
import { FakeToolset, deepFreeze, namesOf, recordingHooks, sleep, type ToolBehaviour } from './support.js';

const partArb: fc.Arbitrary<StreamedMessagePart> = fc.oneof(
  fc.string({ maxLength: 3 }).map((s) => textPart(s)),
  fc.tuple(fc.string({ maxLength: 3 }), fc.option(fc.constantFrom('sig', ''), { nil: undefined })).map(([t, sig]) => thinkPart(t, sig)),
  fc.constant(imageURLPart('https://example.com/i.png')),
  fc.tuple(fc.constantFrom('a', 'b', 'c'), fc.option(fc.constantFrom('{', '{}', '{"x":1}'), { nil: null })).map(([id, args]) => toolCall(id, 'fake', args)),
  fc.option(fc.constantFrom('"k"', ':', '1}'), { nil: null }).map((fragment) => toolCallPart(fragment)),
);

const behaviourArb: fc.Arbitrary<ToolBehaviour> = fc.oneof(
  fc.constant<ToolBehaviour>({ kind: 'sync' }),
  // Honours its signal: an abort makes it reject at once.
  fc.integer({ min: 0, max: 20 }).map((ms): ToolBehaviour => ({ kind: 'async', ms })),
  fc.constant<ToolBehaviour>({ kind: 'throw' }),
  fc.integer({ min: 0, max: 4 }).map((ms): ToolBehaviour => ({ kind: 'reject', ms })),
  fc.integer({ min: 0, max: 10 }).map((ms): ToolBehaviour => ({ kind: 'settleAfterAbort', ms })),
  fc.integer({ min: 0, max: 40 }).map((ms): ToolBehaviour => ({ kind: 'ignoreAbort', ms })),
  // Returns (or resolves with) a result whose `toolCallId` getter throws.
  fc.boolean().map((async): ToolBehaviour => ({ kind: 'poisonedResult', async })),
);

type Scenario =
  | { kind: 'none' }
  | { kind: 'abortAtPart'; part: number }
  | { kind: 'providerErrorAtPart'; part: number }
  | { kind: 'abortDuringTools'; afterMs: number };

const scenarioArb: fc.Arbitrary<Scenario> = fc.oneof(
  fc.constant<Scenario>({ kind: 'none' }),
  fc.nat({ max: 12 }).map((part): Scenario => ({ kind: 'abortAtPart', part })),
  fc.nat({ max: 12 }).map((part): Scenario => ({ kind: 'providerErrorAtPart', part })),
  fc.integer({ min: 0, max: 6 }).map((afterMs): Scenario => ({ kind: 'abortDuringTools', afterMs })),
);

const texts = (parts: readonly StreamedMessagePart[]): string =>
  parts.map((p) => (p.type === 'text' ? p.text : '')).join('');

describe('step() invariants (property test)', function () {
  this.timeout(60_000);

  it('hold for random part sequences, tool behaviours, abort points and provider failures', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(partArb, { maxLength: 14 }),
        fc.array(behaviourArb, { minLength: 14, maxLength: 14 }),
        scenarioArb,
        fc.constantFrom<'streaming' | 'deferred'>('streaming', 'deferred'),
        async (parts, behaviours, scenario, dispatch) => {
          deepFreeze(parts);
          const history: readonly Message[] = deepFreeze([{ role: 'user', content: [textPart('go')] }]);
          const historyCopy = structuredClone(history);
          let callNo = 0;
          const toolset = new FakeToolset(() => behaviours[callNo++ % behaviours.length]!);
          const controller = new AbortController();
          const abortReason = new Error('abort');
          const providerError = new APIConnectionError('provider broke');
          const seen: StreamedMessagePart[] = [];
          const { entry, events } = recordingHooks();
          const provider = new MockChatProvider(
            parts,
            scenario.kind === 'providerErrorAtPart' ? { errorAfter: { parts: scenario.part, error: providerError } } : {},
          );

          let outcome: { ok: true; value: Awaited<ReturnType<typeof step>> } | { ok: false; error: unknown };
          try {
            const value = await step({
              provider,
              systemPrompt: '',
              toolset,
              history,
              signal: controller.signal,
              dispatch,
              hooks: [entry],
              cleanupTimeoutMs: 25,
              onMessagePart: (part) => {
                seen.push(part);
                if (scenario.kind === 'abortAtPart' && seen.length === scenario.part + 1) controller.abort(abortReason);
              },
            });
            outcome = { ok: true, value };
          } catch (error) {
            outcome = { ok: false, error };
          }

          // Parts observed: exactly the input parts, in order (a prefix when the step stopped early).
          expect(seen).to.deep.equal(parts.slice(0, seen.length));

          const abortedInStream = scenario.kind === 'abortAtPart' && scenario.part < parts.length;
          const failedInStream = scenario.kind === 'providerErrorAtPart'; // the mock throws at the end if N >= parts
          let results: readonly ToolResult[] | undefined;
          if (abortedInStream) {
            expect(outcome.ok ? 'resolved' : outcome.error).to.equal(abortReason);
          } else if (failedInStream) {
            expect(outcome.ok ? 'resolved' : outcome.error).to.equal(providerError);
          } else if (!outcome.ok) {
            expect(APIEmptyResponseError.isInstance(outcome.error), String(outcome.error)).to.equal(true);
          } else {
            const { message, toolCalls } = outcome.value;
            expect(seen).to.have.length(parts.length);
            // Merging keeps every character of text, in order; one text part per run of adjacent text parts.
            expect(texts(message.content)).to.equal(texts(parts));
            const textRuns = parts.filter((p, i) => p.type === 'text' && (i === 0 || parts[i - 1]!.type !== 'text')).length;
            expect(message.content.filter((p) => p.type === 'text')).to.have.length(textRuns);
            for (const part of message.content) expect(['text', 'think', 'image_url']).to.include(part.type);
            // Every tool call of the stream, in stream order.
            expect(toolCalls.map((c) => c.id)).to.deep.equal(parts.filter((p) => p.type === 'function').map((p) => (p as { id: string }).id));
            if (scenario.kind === 'abortDuringTools') setTimeout(() => controller.abort(abortReason), scenario.afterMs);
            try {
              results = await outcome.value.toolResults();
            } catch (error) {
              expect(scenario.kind).to.equal('abortDuringTools');
              expect(error).to.equal(abortReason);
            }
            if (results) {
              // Call order, index-aligned: duplicate ids cannot collide.
              expect(results.map((r) => r.toolCallId)).to.deep.equal(toolCalls.map((c) => c.id));
              // A result whose getter throws is the tool's failure: an error result, plain data.
              results.forEach((result, i) => {
                if (behaviours[i % behaviours.length]!.kind !== 'poisonedResult') return;
                expect(Object.getOwnPropertyDescriptor(result, 'toolCallId')?.get).to.equal(undefined);
                if (result.returnValue.message.startsWith('Tool call was not executed')) return; // aborted before it ran
                expect(result.returnValue.message).to.match(/^Error running tool: result of \w+ is poisoned$/);
              });
              expect(await outcome.value.toolResults()).to.equal(results);
            }
          }

          // No exit path leaves tool work running, except tools that ignore their signal (reported as leaked).
          const stillRunning = toolset.records.filter((r) => r.settledAt === undefined);
          const cleanup = events.filter(([name]) => name === 'onCleanup');
          expect(cleanup, 'exactly one cleanup').to.have.length(1);
          const leaked = (cleanup[0]![1] as CleanupEvent).leaked;
          for (const record of stillRunning) expect(leaked).to.include(record.call);
          for (const record of toolset.records) {
            const behaviour = behaviours[toolset.records.indexOf(record) % behaviours.length]!;
            if (behaviour.kind !== 'ignoreAbort') expect(record.settledAt, `${behaviour.kind} settled`).to.be.a('number');
          }

          // Lifecycle: one start, one end, cleanup last, nothing after it (even once leaked tools finish).
          await sleep(45);
          const names: StepHookName[] = namesOf(events);
          expect(names.filter((n) => n === 'onStepStart')).to.have.length(1);
          expect(names.filter((n) => n === 'onStepEnd')).to.have.length(1);
          expect(names[0]).to.equal('onStepStart');
          expect(names.at(-1)).to.equal('onCleanup');
          expect(names.indexOf('onStepEnd')).to.be.below(names.indexOf('onCleanup'));

          // History is read-only.
          expect(history).to.deep.equal(historyCopy);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('a tool whose async result has a throwing getter: toolResults() settles with an error result, one cleanup, the kernel lease is released', async () => {
    for (const async of [true, false]) {
      const toolset = new FakeToolset((call) => (call.id === 'b' ? { kind: 'poisonedResult', async } : { kind: 'async', ms: 1 }));
      const { entry, events } = recordingHooks();
      const kernel = new Kernel();
      const parts = [toolCall('a', 'fake', '{}'), toolCall('b', 'fake', '{}'), toolCall('c', 'fake', '{}')];
      await kernel.use(
        definePlugin({ name: 'mock', setup: (ctx) => ctx.bindChatProvider('mock', new MockChatProvider(parts)) }),
        definePlugin({ name: 'tools', setup: (ctx) => ctx.bindToolset(toolset) }),
        definePlugin({ name: 'recorder', setup: (ctx) => ctx.bindHooks(entry.hooks) }),
      );
      const result = await kernel.runner().step({ systemPrompt: '', history: [{ role: 'user', content: [textPart('go')] }] });
      const results = await settlesWithin(result.toolResults(), 'toolResults()');
      expect(results.map((r) => r.toolCallId)).to.deep.equal(['a', 'b', 'c']);
      expect(results[1]!.returnValue).to.include({ isError: true, message: 'Error running tool: result of b is poisoned' });
      expect(results[0]!.returnValue.isError).to.equal(false);
      expect(namesOf(events).filter((name) => name === 'onCleanup'), 'one cleanup').to.have.length(1);
      // The kernel waits for every step's lease: dispose() resolves only once the cleanup released it.
      await settlesWithin(kernel.dispose(), 'kernel.dispose() (waits for the lease)');
    }
  });
});

/** `promise`, or a rejection saying it did not settle within 5 s (generous: a hang, not a slow machine). */
async function settlesWithin<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} never settled`)), 5_000);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
