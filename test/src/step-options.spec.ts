/**
 * The step options (issue 22, part 2): declared once (`StepOptions`), every other layer's options
 * derived from them with their documentation; one name per concept (`onPart`, `onMessagePart` its
 * deprecated alias); one delivery rule for a callback and the hook of the same name (`onPart`
 * awaited, `onToolCall` / `onToolResult` not: the step's cleanup waits for them); one default for
 * `maxSteps`.
 */
import {
  Agent,
  DEFAULT_MAX_STEPS,
  Kernel,
  definePlugin,
  step,
  textPart,
  toolCall,
  type AgentOptions,
  type AgentRunOptions,
  type HookErrorReport,
  type NamedStepHooks,
  type RunnerStepOptions,
  type StepFunction,
  type StepOptions,
  type StreamedMessagePart,
} from '@kosong/core';
import { MockChatProvider } from '@kosong/provider-echo';
import { expect } from 'chai';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { until } from './child-process.js';
import { FakeToolset, deferred, recordingHooks, sleep } from './support.js';

const base = { systemPrompt: 'You are a test.', history: [{ role: 'user' as const, content: [textPart('go')] }] };
const text = (part: StreamedMessagePart): string => (part.type === 'text' ? part.text : part.type);

// exactOptionalPropertyTypes holds through the derived types: an option left out is absent, never `undefined`.
// @ts-expect-error an optional step option is not `undefined`
const _stepOptions: Pick<StepOptions, 'signal'> = { signal: undefined };
// @ts-expect-error the same for a runner's step
const _runnerOptions: RunnerStepOptions = { ...base, onPart: undefined };
// @ts-expect-error the same for a turn
const _runOptions: AgentRunOptions = { generation: undefined };
// @ts-expect-error the same for an agent
const _agentOptions: Partial<AgentOptions> = { output: undefined };
// What the agent hands a step function can be handed on to step() as it is.
const _stepFunction: StepFunction = (options) => step({ ...options, provider: new MockChatProvider([]), toolset: new FakeToolset() });
void [_stepOptions, _runnerOptions, _runOptions, _agentOptions, _stepFunction];

describe('step options', () => {
  describe('onPart, and onMessagePart its deprecated alias', () => {
    for (const name of ['onPart', 'onMessagePart'] as const) {
      it(`${name} gets each streamed part, frozen; its failure is reported under the name it was given (options.${name})`, async () => {
        const seen: string[] = [];
        const reports: HookErrorReport[] = [];
        const callback = (part: StreamedMessagePart): void => {
          seen.push(text(part));
          expect(Object.isFrozen(part)).to.equal(true);
          if (text(part) === 'b') throw new Error('kaput');
        };
        await step({
          ...base,
          provider: new MockChatProvider([textPart('a'), textPart('b')]),
          toolset: new FakeToolset(),
          ...(name === 'onPart' ? { onPart: callback } : { onMessagePart: callback }),
          onHookError: (report) => void reports.push(report),
        });
        expect(seen).to.deep.equal(['a', 'b']);
        expect(reports.map((r) => `${r.plugin}.${r.hook} ${r.kind}`)).to.deep.equal([`options.${name} threw`]);
      });
    }

    /** Both names given, to `step()` or to a kernel runner's step: a TypeError naming both, and nothing ran. */
    async function refusesBoth(run: (options: Pick<StepOptions, 'onPart' | 'onMessagePart' | 'hooks'>) => Promise<unknown>): Promise<void> {
      const recorder = recordingHooks();
      const called: string[] = [];
      const error = await run({ onPart: () => void called.push('onPart'), onMessagePart: () => void called.push('onMessagePart'), hooks: [recorder.entry] }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).to.be.instanceOf(TypeError);
      expect((error as Error).message).to.include('onPart').and.to.include('onMessagePart');
      expect(recorder.events).to.deep.equal([]);
      expect(called).to.deep.equal([]);
    }

    it('both given: step() rejects with a TypeError naming both, before anything runs', async () => {
      const provider = new MockChatProvider([textPart('a')]);
      await refusesBoth((options) => step({ ...base, provider, toolset: new FakeToolset(), ...options }));
      expect(provider.generateCalls).to.equal(0);
    });

    it("both given to a kernel runner's step: the same TypeError; the step's lease is given back", async () => {
      const provider = new MockChatProvider([textPart('a')]);
      const kernel = new Kernel();
      await kernel.use(definePlugin({ name: 'mock', setup: (ctx) => ctx.bindChatProvider('mock', provider) }));
      await refusesBoth((options) => kernel.runner().step({ ...base, ...options }));
      expect(provider.generateCalls).to.equal(0);
      // A lease still held would keep dispose waiting for a step that never ends.
      const disposed = await Promise.race([kernel.dispose().then(() => true), sleep(1_000).then(() => false)]);
      expect(disposed).to.equal(true);
    });

    it("a runner's step passes onPart on", async () => {
      const kernel = new Kernel();
      await kernel.use(definePlugin({ name: 'mock', setup: (ctx) => ctx.bindChatProvider('mock', new MockChatProvider([textPart('a'), textPart('b')])) }));
      const seen: string[] = [];
      await kernel.runner().step({ ...base, onPart: (part) => void seen.push(text(part)) });
      await kernel.dispose();
      expect(seen).to.deep.equal(['a', 'b']);
    });
  });

  describe('awaited or not: a callback is delivered as the hook of its name', () => {
    /** The step's callbacks given as options, or as one owner's hooks: both must behave alike. */
    const ways = {
      option: (callbacks: Pick<StepOptions, 'onPart' | 'onToolCall' | 'onToolResult'>): Partial<StepOptions> => callbacks,
      hook: (callbacks: Pick<StepOptions, 'onPart' | 'onToolCall' | 'onToolResult'>): Partial<StepOptions> => {
        const { onPart, onToolCall, onToolResult } = callbacks;
        const hooks: NamedStepHooks['hooks'] = {
          ...(onPart && { onPart: (e) => onPart(e.part) }),
          ...(onToolCall && { onToolCall: (e) => onToolCall(e.toolCall) }),
          ...(onToolResult && { onToolResult: (e) => onToolResult(e.result) }),
        };
        return { hooks: [{ name: 'slow', hooks }] };
      },
    };

    for (const [way, given] of Object.entries(ways)) {
      it(`onPart (${way}) is awaited: the next part waits for it`, async () => {
        const gate = deferred();
        const order: string[] = [];
        const pending = step({
          ...base,
          provider: new MockChatProvider([textPart('1'), textPart('2')]),
          toolset: new FakeToolset(),
          ...given({
            onPart: async (part) => {
              order.push(`start ${text(part)}`);
              if (text(part) === '1') await gate.promise;
              order.push(`end ${text(part)}`);
            },
          }),
        });
        await sleep(20);
        expect(order).to.deep.equal(['start 1']);
        gate.resolve();
        await pending;
        expect(order).to.deep.equal(['start 1', 'end 1', 'start 2', 'end 2']);
      });

      for (const callback of ['onToolCall', 'onToolResult'] as const) {
        it(`${callback} (${way}) is not awaited: the stream and the tool go on; the step's cleanup waits for it`, async () => {
          const gate = deferred();
          const toolset = new FakeToolset(() => ({ kind: 'sync' }));
          const recorder = recordingHooks('cleanup');
          let streamed = '';
          const wait = (): Promise<void> => gate.promise;
          const options = given(callback === 'onToolCall' ? { onToolCall: wait } : { onToolResult: wait });
          const pending = step({
            ...base,
            provider: new MockChatProvider([toolCall('c1', 'fake', '{}'), textPart('after')], { delayMs: 1 }),
            toolset,
            ...options,
            hooks: [...(options.hooks ?? []), recorder.entry],
            onPart: (part) => void (streamed += part.type === 'text' ? part.text : ''),
          });
          // the step goes on while the callback is held: the tool settles, the text streams, the step ends (no fixed sleep: a loaded machine is slow)
          await until(() => toolset.records[0]?.settledAt !== undefined && streamed === 'after' && recorder.events.some(([name]) => name === 'onStepEnd'), 'the tool settled and the step ended while the callback waits', 5_000);
          expect(toolset.records.map((r) => r.settledAt !== undefined)).to.deep.equal([true]);
          expect(streamed).to.equal('after');
          expect(recorder.events.map(([name]) => name)).to.include('onStepEnd').and.not.to.include('onCleanup');
          gate.resolve();
          const result = await pending;
          await result.toolResults();
          expect(recorder.events.map(([name]) => name).at(-1)).to.equal('onCleanup');
        });
      }
    }
  });

  it(`an agent without maxSteps stops after DEFAULT_MAX_STEPS (${DEFAULT_MAX_STEPS}) steps`, async () => {
    const provider = new MockChatProvider([toolCall('again', 'fake', '{}')]);
    const toolset = new FakeToolset(() => ({ kind: 'sync' }));
    const agent = new Agent({ systemPrompt: '', step: (options) => step({ ...options, provider, toolset }) });
    const result = await agent.run('loop');
    expect(DEFAULT_MAX_STEPS).to.equal(100);
    expect(result).to.include({ stopReason: 'max_steps', steps: DEFAULT_MAX_STEPS });
    expect(provider.generateCalls).to.equal(DEFAULT_MAX_STEPS);
  });

  describe('the derived option types, in the emitted declarations', () => {
    let checker: ts.TypeChecker;
    let core: Map<string, ts.Symbol>;
    let bullmq: Map<string, ts.Symbol>;

    before(() => {
      const root = fileURLToPath(new URL('../..', import.meta.url));
      const entries = [`${root}core/lib/index.d.ts`, `${root}plugins/bullmq/lib/index.d.ts`];
      const program = ts.createProgram(entries, {
        strict: true,
        exactOptionalPropertyTypes: true,
        module: ts.ModuleKind.NodeNext,
        moduleResolution: ts.ModuleResolutionKind.NodeNext,
        skipLibCheck: true,
        noEmit: true,
      });
      checker = program.getTypeChecker();
      const exportsOf = (file: string): Map<string, ts.Symbol> => {
        const module = checker.getSymbolAtLocation(program.getSourceFile(file)!)!;
        return new Map(checker.getExportsOfModule(module).map((symbol) => [symbol.name, symbol]));
      };
      [core, bullmq] = entries.map(exportsOf) as [Map<string, ts.Symbol>, Map<string, ts.Symbol>];
    });

    /** Each property of an exported type (or of its first parameter, for a function type) with its documentation. */
    function docsOf(exports: Map<string, ts.Symbol>, name: string, parameter = false): Map<string, string> {
      const symbol = exports.get(name);
      expect(symbol, name).not.to.equal(undefined);
      const resolved = symbol!.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol!) : symbol!;
      let type = checker.getDeclaredTypeOfSymbol(resolved);
      if (parameter) type = checker.getTypeOfSymbol(checker.getSignaturesOfType(type, ts.SignatureKind.Call)[0]!.parameters[0]!);
      return new Map(checker.getPropertiesOfType(type).map((p) => [p.name, ts.displayPartsToString(p.getDocumentationComment(checker))]));
    }

    /**
     * The derived types: where from, whether it is a function's options, and the options whose name
     * is a step option's but whose meaning is the layer's own (documented there): a runner step's
     * per-call hooks, a runner's tenant and provider name, the agent's conversation (`context`) and
     * the agent's handlers (its `onHookError` receives its own callbacks' failures; its `onApproval`
     * and `approvalTimeoutMs` also decide the turn's `approval_required` and a deferred call's expiry).
     */
    const agentOwn = ['context', 'onHookError', 'onApproval', 'approvalTimeoutMs'];
    const derived: readonly [string, 'core' | 'bullmq', boolean, readonly string[]][] = [
      ['RunnerStepOptions', 'core', false, ['hooks']],
      ['StepFunction', 'core', true, []],
      ['AgentRunOptions', 'core', false, []],
      ['AgentOptions', 'core', false, agentOwn],
      ['KernelAgentOptions', 'core', false, [...agentOwn, 'tenant', 'provider']],
      ['TurnOptions', 'bullmq', false, ['provider']],
    ];

    it('every option of StepOptions has its documentation', () => {
      const step = docsOf(core, 'StepOptions');
      expect([...step].filter(([, doc]) => doc === '').map(([name]) => name)).to.deep.equal([]);
    });

    for (const [name, from, parameter, own] of derived) {
      it(`${name}${parameter ? "'s options" : ''}: every option documented, each one taken from StepOptions with StepOptions' words`, () => {
        const step = docsOf(core, 'StepOptions');
        const docs = docsOf(from === 'core' ? core : bullmq, name, parameter);
        expect([...docs].filter(([, doc]) => doc === '').map(([option]) => option)).to.deep.equal([]);
        const shared = [...docs.keys()].filter((option) => step.has(option) && !own.includes(option));
        expect(shared.length).to.be.greaterThan(0);
        for (const option of shared) expect(docs.get(option), `${name}.${option}`).to.equal(step.get(option));
      });
    }

    it('onMessagePart is marked @deprecated, naming onPart', () => {
      const resolved = checker.getDeclaredTypeOfSymbol(core.get('StepOptions')!);
      const tags = checker.getPropertyOfType(resolved, 'onMessagePart')!.getJsDocTags(checker);
      const deprecated = tags.find((tag) => tag.name === 'deprecated');
      expect(ts.displayPartsToString(deprecated?.text)).to.include('onPart');
    });
  });
});
