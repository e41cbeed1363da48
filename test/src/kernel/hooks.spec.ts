import {
  HookErrorSink,
  Kernel,
  definePlugin,
  textPart,
  toolOk,
  type HookErrorReport,
  type Message,
  type StepEndEvent,
  type StepHooks,
  type ToolCall,
  type ToolResult,
  type Toolset,
} from '@kosong/core';
import { DEFAULT_MAX_HOOK_FAILURES, type HookFailureKind, type StepHookName } from '@kosong/core/runtime';
import { MockChatProvider } from '@kosong/provider-echo';
import { expect } from 'chai';
import { ContainerModule } from 'inversify';
import sinon from 'sinon';
import { namesOf, only, recordingHooks, sleep } from '../support.js';
import { base, call, isSettled, rejectionOf } from './support.js';

const HOOK_TIMEOUT_MS = 20;
const HOOKS: readonly StepHookName[] = ['onStepStart', 'onPart', 'onToolCall', 'onToolResult', 'onStepEnd', 'onCleanup'];
const FAILURES = ['sync throw', 'rejection', 'never settles'] as const;
const OUTCOMES = ['succeeds', 'provider fails mid-stream', 'aborted via signal'] as const;
type Failure = (typeof FAILURES)[number];
type Outcome = (typeof OUTCOMES)[number];

const KIND: Record<Failure, HookFailureKind> = { 'sync throw': 'threw', rejection: 'rejected', 'never settles': 'timeout' };
const PARTS = [textPart('hi'), call('a'), textPart(' there'), call('b')];

/** What a step ended with. */
type Settled = { ok: true; message: Message; results: readonly ToolResult[] } | { ok: false; error: unknown };

/** One run of the matrix scenario: a kernel with the given plugins, one step of the given outcome. */
interface Scenario {
  readonly outcome: Outcome;
  readonly tenant: string | undefined;
  /** The hook that fails, and how; none for the baseline. */
  readonly failing?: { readonly hook: StepHookName; readonly failure: Failure };
}

interface Run {
  readonly settled: Settled;
  readonly recorded: [StepHookName, unknown][];
  readonly reports: HookErrorReport[];
  /** Events the failing hook was called with. */
  readonly invocations: unknown[];
  readonly failureError: Error;
  readonly outcomeError: unknown;
}

// One error per outcome, shared by the baseline and the failing runs, so identity can be compared.
const PROVIDER_ERROR = new Error('the provider broke off');
const ABORT_REASON = new Error('the user aborted');

async function runScenario(scenario: Scenario): Promise<Run> {
  const { outcome, tenant, failing } = scenario;
  const kernel = new Kernel({ hookTimeoutMs: HOOK_TIMEOUT_MS });
  const controller = new AbortController();
  const provider =
    outcome === 'succeeds'
      ? new MockChatProvider(PARTS)
      : outcome === 'provider fails mid-stream'
        ? new MockChatProvider(PARTS, { errorAfter: { parts: 3, error: PROVIDER_ERROR } }) // after call a is complete
        : new MockChatProvider([...PARTS, textPart('never streamed')], { delayMs: 3 });
  const toolset: Toolset = {
    tools: [{ name: 'fake', description: 'A fake tool.', parameters: { type: 'object' } }],
    handle: (c: ToolCall): ToolResult => {
      // The abort comes from outside, once the first tool call is running.
      if (outcome === 'aborted via signal' && c.id === 'a') setTimeout(() => controller.abort(ABORT_REASON), 0);
      return { toolCallId: c.id, returnValue: toolOk({ output: `done ${c.id}` }) };
    },
  };
  const reports: HookErrorReport[] = [];
  const invocations: unknown[] = [];
  const failureError = new Error(`hook ${failing?.hook} failed`);
  const recorder = recordingHooks('recorder');

  const plugins = [
    definePlugin({ name: 'mock', setup: (ctx) => ctx.bindChatProvider('mock', provider) }),
    definePlugin({ name: 'tools', setup: (ctx) => ctx.bindToolset(toolset) }),
    definePlugin({ name: 'sink', setup: (ctx) => ctx.bindHookErrorSink({ report: (r) => void reports.push(r) }) }),
  ];
  if (failing) {
    const fail = (event: unknown): void | Promise<void> => {
      invocations.push(event);
      switch (failing.failure) {
        case 'sync throw':
          throw failureError;
        case 'rejection':
          return Promise.reject(failureError);
        case 'never settles':
          return new Promise<void>(() => undefined);
      }
    };
    plugins.push(definePlugin({ name: 'failing', setup: (ctx) => ctx.bindHooks({ [failing.hook]: fail }) }));
  }
  plugins.push(definePlugin({ name: 'recorder', setup: (ctx) => ctx.bindHooks(recorder.entry.hooks) }));
  await kernel.use(...plugins);
  if (tenant !== undefined) kernel.tenants.define(tenant);

  let settled: Settled;
  try {
    const result = await kernel.runner(tenant === undefined ? {} : { tenant }).step({ ...base, signal: controller.signal });
    settled = { ok: true, message: result.message, results: await result.toolResults() };
  } catch (error) {
    settled = { ok: false, error };
  }
  await kernel.dispose();
  const outcomeError = outcome === 'succeeds' ? undefined : outcome === 'provider fails mid-stream' ? PROVIDER_ERROR : ABORT_REASON;
  return { settled, recorded: recorder.events, reports, invocations, failureError, outcomeError };
}

/** Start/end/cleanup pairing as the recording plugin saw it. */
function expectPairing(run: Run, tenant: string | undefined): string {
  const names = namesOf(run.recorded);
  expect(names[0]).to.equal('onStepStart');
  expect(names.at(-1)).to.equal('onCleanup');
  expect(names.filter((n) => n === 'onStepStart')).to.have.length(1);
  expect(names.filter((n) => n === 'onStepEnd')).to.have.length(1);
  expect(names.filter((n) => n === 'onCleanup')).to.have.length(1);
  const end = only<StepEndEvent>(run.recorded, 'onStepEnd');
  expect(end.error).to.equal(run.outcomeError);
  const stepIds = new Set(run.recorded.map(([, e]) => (e as { stepId: string }).stepId));
  expect(stepIds.size).to.equal(1);
  for (const [, event] of run.recorded) expect(event).to.include({ tenant, provider: 'mock', model: 'mock' });
  return [...stepIds][0]!;
}

describe('kernel: hooks', () => {
  afterEach(() => sinon.restore());

  describe('the hook guard matrix (hook × failure × outcome)', () => {
    const baselines = new Map<Outcome, Run>();
    before(async () => {
      for (const outcome of OUTCOMES) baselines.set(outcome, await runScenario({ outcome, tenant: undefined }));
    });

    it('baselines: each outcome is what the matrix expects, with no hook failure', () => {
      const ok = baselines.get('succeeds')!;
      expect(ok.settled.ok).to.equal(true);
      if (ok.settled.ok) {
        expect(ok.settled.message).to.deep.equal({ role: 'assistant', content: [textPart('hi'), textPart(' there')], toolCalls: [call('a'), call('b')] });
        expect(ok.settled.results.map((r) => r.returnValue.output)).to.deep.equal(['done a', 'done b']);
      }
      expect(baselines.get('provider fails mid-stream')!.settled).to.deep.equal({ ok: false, error: PROVIDER_ERROR });
      expect(baselines.get('aborted via signal')!.settled).to.deep.equal({ ok: false, error: ABORT_REASON });
      for (const run of baselines.values()) {
        expect(run.reports).to.deep.equal([]);
        expectPairing(run, undefined);
        // Every hook of the matrix is reached in every outcome (else its row would test nothing).
        for (const hook of HOOKS) expect(namesOf(run.recorded), hook).to.include(hook);
      }
    });

    let index = 0;
    for (const hook of HOOKS) {
      for (const failure of FAILURES) {
        for (const outcome of OUTCOMES) {
          const tenant = index++ % 2 === 0 ? 'acme' : undefined;
          it(`${hook} × ${failure} × step ${outcome}${tenant ? ` (tenant ${tenant})` : ''}`, async () => {
            const run = await runScenario({ outcome, tenant, failing: { hook, failure } });
            const baseline = baselines.get(outcome)!;

            // The step's outcome is unchanged.
            if (baseline.settled.ok) {
              expect(run.settled).to.deep.equal(baseline.settled);
              // ... and so is what the other hooks saw.
              expect(namesOf(run.recorded)).to.deep.equal(namesOf(baseline.recorded));
            } else {
              expect(run.settled.ok).to.equal(false);
              expect(run.settled.ok === false && run.settled.error).to.equal(baseline.outcomeError);
            }

            // Start/end/cleanup pairing holds for the plugin registered after the failing one.
            const stepId = expectPairing(run, tenant);

            // Each failing invocation is reported exactly once, before the step settled.
            expect(run.invocations.length, 'invocations of the failing hook').to.be.within(1, DEFAULT_MAX_HOOK_FAILURES);
            expect(run.reports).to.have.length(run.invocations.length);
            run.reports.forEach((report, i) => {
              expect(report).to.include({ plugin: 'failing', hook, stepId, tenant, kind: KIND[failure] });
              expect(report.detached).to.equal(i === DEFAULT_MAX_HOOK_FAILURES - 1);
              if (failure === 'never settles') expect(String((report.error as Error).message)).to.include(`${HOOK_TIMEOUT_MS} ms`);
              else expect(report.error).to.equal(run.failureError);
            });
            for (const event of run.invocations) expect(event).to.include({ stepId, tenant });
            // Nothing is reported late.
            const reported = run.reports.length;
            await (failure === 'never settles' ? sleep(HOOK_TIMEOUT_MS + 5) : new Promise((resolve) => setImmediate(resolve)));
            expect(run.reports).to.have.length(reported);
          });
        }
      }
    }

    it('covers all 54 cases', () => {
      expect(index).to.equal(HOOKS.length * FAILURES.length * OUTCOMES.length);
      expect(index).to.equal(54);
    });
  });

  describe('hook plugins', () => {
    let kernel: Kernel;
    beforeEach(() => {
      kernel = new Kernel({ hookTimeoutMs: HOOK_TIMEOUT_MS });
    });
    afterEach(() => {
      sinon.restore(); // the fake clock first: disposal runs on real time
      return kernel.dispose();
    });

    const mockPlugin = (provider = new MockChatProvider([textPart('ok')])) =>
      definePlugin({ name: 'mock', setup: (ctx) => ctx.bindChatProvider('mock', provider) });

    it('a timing plugin measures each step from onStepStart to onStepEnd (fake clock: parts 10 ms apart)', async () => {
      const clock = sinon.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
      const durations = new Map<string, { measured: number; reported: number }>();
      const started = new Map<string, number>();
      const timing = definePlugin({
        name: 'timing',
        setup: (ctx) =>
          ctx.bindHooks({
            onStepStart: (e) => void started.set(e.stepId, performance.now()),
            onStepEnd: (e) => {
              durations.set(e.stepId, { measured: performance.now() - started.get(e.stepId)!, reported: e.durationMs });
              started.delete(e.stepId);
            },
          }),
      });
      await kernel.use(mockPlugin(new MockChatProvider([textPart('a'), textPart('b'), textPart('c')], { delayMs: 10 })), timing);
      const runner = kernel.runner();
      const running = Promise.all([runner.step(base), runner.step(base)]);
      await clock.tickAsync(29);
      expect(durations.size, 'no step ended before its third part').to.equal(0);
      await clock.tickAsync(1);
      expect(await isSettled(running), 'both steps ended with their third part, at 30 ms').to.equal(true);
      const results = await running;
      expect([...durations.keys()].sort()).to.deep.equal(results.map((r) => r.stepId).sort());
      expect([...durations.values()]).to.deep.equal([
        { measured: 30, reported: 30 },
        { measured: 30, reported: 30 },
      ]);
      expect(started.size).to.equal(0);
    });

    it('without a bound sink, a failure is written to stderr as one line', async () => {
      await kernel.use(
        mockPlugin(),
        definePlugin({
          name: 'failing',
          setup: (ctx) =>
            ctx.bindHooks({
              onStepStart: () => {
                throw new Error('telemetry is down');
              },
            }),
        }),
      );
      kernel.tenants.define('acme');
      const lines: string[] = [];
      const write = sinon.stub(process.stderr, 'write').callsFake(((chunk: string | Uint8Array) => {
        lines.push(String(chunk));
        return true;
      }) as typeof process.stderr.write);
      let stepId: string;
      try {
        stepId = (await kernel.runner({ tenant: 'acme' }).step(base)).stepId;
      } finally {
        write.restore();
      }
      const ours = lines.filter((l) => l.startsWith('[kosong]'));
      expect(ours).to.have.length(1);
      const [line] = ours;
      expect(line).to.match(/\n$/);
      expect(line!.split('\n')).to.have.length(2);
      for (const piece of ['failing', 'onStepStart', stepId, 'acme', 'telemetry is down']) expect(line).to.include(piece);
    });

    it('binding a sink replaces the default; the last sink bound wins; a tenant module may bind its own', async () => {
      const first: HookErrorReport[] = [];
      const second: HookErrorReport[] = [];
      const tenantSink: HookErrorReport[] = [];
      const stderr = sinon.stub(process.stderr, 'write').returns(true);
      try {
        await kernel.use(
          mockPlugin(),
          definePlugin({ name: 'sink-1', setup: (ctx) => ctx.bindHookErrorSink({ report: (r) => void first.push(r) }) }),
          definePlugin({
            name: 'failing',
            setup: (ctx) =>
              ctx.bindHooks({
                onStepEnd: () => {
                  throw new Error('nope');
                },
              }),
          }),
        );
        await kernel.runner().step(base);
        expect(first.map((r) => r.hook)).to.deep.equal(['onStepEnd']);

        await kernel.use(definePlugin({ name: 'sink-2', setup: (ctx) => ctx.bindHookErrorSink({ report: (r) => void second.push(r) }) }));
        kernel.tenants.define('acme', {
          modules: [new ContainerModule(({ bind }) => void bind<HookErrorSink>(HookErrorSink).toConstantValue({ report: (r) => void tenantSink.push(r) }))],
        });
        kernel.tenants.define('globex');
        await kernel.runner().step(base);
        await kernel.runner({ tenant: 'globex' }).step(base);
        await kernel.runner({ tenant: 'acme' }).step(base);
        expect(first).to.have.length(1);
        expect(second.map((r) => r.tenant)).to.deep.equal([undefined, 'globex']);
        expect(tenantSink.map((r) => r.tenant)).to.deep.equal(['acme']);
        sinon.assert.notCalled(stderr);
      } finally {
        stderr.restore();
      }
    });

    it('a sink that throws does not change the step; the failure goes to stderr instead', async () => {
      const lines: string[] = [];
      await kernel.use(
        mockPlugin(),
        definePlugin({
          name: 'sink',
          setup: (ctx) =>
            ctx.bindHookErrorSink({
              report: () => {
                throw new Error('sink is broken');
              },
            }),
        }),
        definePlugin({ name: 'failing', setup: (ctx) => ctx.bindHooks({ onStepStart: () => Promise.reject(new Error('nope')) }) }),
      );
      const write = sinon.stub(process.stderr, 'write').callsFake(((chunk: string | Uint8Array) => {
        lines.push(String(chunk));
        return true;
      }) as typeof process.stderr.write);
      let result;
      try {
        result = await kernel.runner().step(base);
      } finally {
        write.restore();
      }
      expect(result.message.content).to.deep.equal([textPart('ok')]);
      const ours = lines.filter((l) => l.startsWith('[kosong]'));
      expect(ours).to.have.length(2);
      expect(ours[0]).to.include('failing.onStepStart').and.include('nope');
      expect(ours[1]).to.include('sink is broken');
    });

    it('a hook that rejects after its timeout is reported once, as a timeout; the step does not wait for it (fake clock)', async () => {
      const clock = sinon.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
      const reports: HookErrorReport[] = [];
      const late = sinon.spy(() => sleep(150).then(() => Promise.reject(new Error('too late'))));
      await kernel.use(
        mockPlugin(),
        definePlugin({ name: 'sink', setup: (ctx) => ctx.bindHookErrorSink({ report: (r) => void reports.push(r) }) }),
        definePlugin({ name: 'late', setup: (ctx) => ctx.bindHooks({ onStepStart: late }) }),
      );
      const running = kernel.runner().step(base);
      await clock.tickAsync(HOOK_TIMEOUT_MS - 1);
      expect(reports, 'nothing reported before the timeout').to.deep.equal([]);
      await clock.tickAsync(1);
      expect(await isSettled(running), 'the step ended at the hook timeout, not when the hook settled').to.equal(true);
      sinon.assert.calledOnce(late);
      expect(reports.map((r) => [r.plugin, r.hook, r.kind])).to.deep.equal([['late', 'onStepStart', 'timeout']]);
      await clock.tickAsync(150); // the hook now rejects: already reported, not again
      expect(reports).to.have.length(1);
    });

    it('hooks never fire for another tenant\'s steps, and their failures are not reported there', async () => {
      const reports: HookErrorReport[] = [];
      const recorders = { acme: recordingHooks('acme'), globex: recordingHooks('globex'), global: recordingHooks('global') };
      const failingAcme: StepHooks = {
        onStepStart: () => {
          throw new Error('acme only');
        },
      };
      await kernel.use(
        mockPlugin(new MockChatProvider([textPart('x'), call('a')])),
        definePlugin({ name: 'sink', setup: (ctx) => ctx.bindHookErrorSink({ report: (r) => void reports.push(r) }) }),
        definePlugin({ name: 'global', setup: (ctx) => ctx.bindHooks(recorders.global.entry.hooks) }),
      );
      kernel.tenants.define('acme', { hooks: [recorders.acme.entry, failingAcme] });
      kernel.tenants.define('globex', { hooks: [recorders.globex.entry] });

      await (await kernel.runner({ tenant: 'globex' }).step(base)).toolResults();
      await (await kernel.runner().step(base)).toolResults();
      expect(recorders.acme.events).to.deep.equal([]);
      expect(reports).to.deep.equal([]);
      expect(new Set(namesOf(recorders.globex.events))).to.deep.equal(new Set(HOOKS));
      expect(recorders.globex.events.every(([, e]) => (e as { tenant: unknown }).tenant === 'globex')).to.equal(true);

      const acme = await kernel.runner({ tenant: 'acme' }).step(base);
      await acme.toolResults();
      expect(recorders.acme.events.every(([, e]) => (e as { stepId: unknown }).stepId === acme.stepId)).to.equal(true);
      expect(new Set(namesOf(recorders.acme.events))).to.deep.equal(new Set(HOOKS));
      expect(reports.map((r) => [r.plugin, r.hook, r.tenant, r.stepId])).to.deep.equal([['tenant acme hooks #2', 'onStepStart', 'acme', acme.stepId]]);
      expect(namesOf(recorders.globex.events).filter((n) => n === 'onStepStart')).to.have.length(1);
      expect(namesOf(recorders.global.events).filter((n) => n === 'onStepStart')).to.have.length(3);
    });

    it('reports a hook failure of a plugin under the plugin\'s name, and of a per-call hook under its own', async () => {
      const reports: HookErrorReport[] = [];
      const boom = (): never => {
        throw new Error('boom');
      };
      await kernel.use(
        mockPlugin(),
        definePlugin({ name: 'sink', setup: (ctx) => ctx.bindHookErrorSink({ report: (r) => void reports.push(r) }) }),
        definePlugin({ name: 'telemetry', setup: (ctx) => ctx.bindHooks({ onCleanup: boom }) }),
      );
      const error = await rejectionOf(
        kernel.runner().step({ ...base, signal: AbortSignal.abort(new Error('stop')), hooks: [{ onCleanup: boom }, { name: 'ui', hooks: { onCleanup: boom } }] }),
      );
      expect((error as Error).message).to.equal('stop');
      expect(reports.map((r) => r.plugin)).to.deep.equal(['telemetry', 'step hooks #1', 'ui']);
    });
  });
});
