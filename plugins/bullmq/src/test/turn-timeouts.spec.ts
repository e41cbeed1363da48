import { Kernel, TenantLimitError, TimeoutBudgetError, definePlugin } from '@kosong/core';
import type { TenantLimits } from '@kosong/core/kernel';
import { expect } from 'chai';
import { AgentWorker, TurnFailedError, TurnQueue, type TurnOptions } from '../index.js';
import { PlanProvider, planInput, type Plan } from '../testing/plan-provider.js';
import { RedisServer } from '../testing/redis-server.js';
import { closeAll, ProbeToolset, testPrefix } from './support.js';

describe('TurnOptions.timeouts and typed errors back to the submitter (real Redis, in-process worker)', function () {
  this.timeout(60_000);
  let server: RedisServer;
  let prefix: string;
  let probe: ProbeToolset;
  let turns: TurnQueue;
  const closers: (() => Promise<unknown>)[] = [];

  before(async () => {
    server = await RedisServer.start();
  });
  after(() => server.stop());
  afterEach(() => closeAll(closers));

  /** A worker whose tenant `acme` has a local probe toolset (and `limits`), and a queue to submit to. */
  async function start(limits?: TenantLimits): Promise<void> {
    prefix = testPrefix();
    probe = new ProbeToolset();
    const kernel = new Kernel();
    await kernel.use(definePlugin({ name: 'plan', setup: (ctx) => ctx.bindChatProvider('plan', new PlanProvider(), { default: true }) }));
    kernel.tenants.define('acme', { toolset: probe, ...(limits === undefined ? {} : { limits }) });
    const worker = new AgentWorker({ connection: server.url, kernel, prefix, concurrency: 2, lockDurationMs: 3_000, waitTurnMs: 50 });
    await worker.start();
    closers.push(async () => {
      await worker.close({ deadlineMs: 500 });
      await kernel.dispose();
    });
    turns = new TurnQueue({ connection: server.url, prefix });
    closers.push(() => turns.close());
  }

  async function failureOf(plan: Plan, options: TurnOptions, session = 's1'): Promise<TurnFailedError> {
    const handle = await turns.submit({ tenant: 'acme', session, input: planInput(plan), options });
    try {
      await handle.result();
    } catch (error) {
      expect(TurnFailedError.isInstance(error), String(error)).to.equal(true);
      return error as TurnFailedError;
    }
    throw new Error('the turn did not fail');
  }

  it('a step over its stepMs fails the turn with a TurnFailedError whose cause is the TimeoutBudgetError', async () => {
    await start();
    const error = await failureOf({ label: 'slow', steps: [], parts: 10, partDelayMs: 100 }, { timeouts: { stepMs: 150 } });
    expect(error.errorName).to.equal('TimeoutBudgetError');
    expect(TimeoutBudgetError.isInstance(error.cause)).to.equal(true);
    expect(error.cause).to.deep.include({ budget: 'step', limitMs: 150 });
    expect((error.cause as TimeoutBudgetError).stepId).to.be.a('string');
  });

  it('turnMs and idleMs reach the worker too, each named in the error', async () => {
    await start();
    const turn = await failureOf({ label: 'long', steps: [[{ tool: 'sleep', args: { ms: 150 } }], [{ tool: 'sleep', args: { ms: 150 } }]] }, { timeouts: { turnMs: 200 } });
    expect(turn.cause).to.deep.include({ budget: 'turn', limitMs: 200 });
    const idle = await failureOf({ label: 'quiet', steps: [], parts: 2, partDelayMs: 400 }, { timeouts: { idleMs: 100 } }, 's2');
    expect(idle.cause).to.deep.include({ budget: 'idle', limitMs: 100 });
  });

  it("a tool call over its toolCallMs is an error result to the model; the turn goes on and ends", async () => {
    await start();
    const handle = await turns.submit({ tenant: 'acme', session: 's1', input: planInput({ label: 'tool', steps: [[{ tool: 'sleep', args: { ms: 2_000 } }]] }), options: { timeouts: { toolCallMs: 100 } } });
    const result = await handle.result();
    expect(result.stopReason).to.equal('no_tool_calls');
    expect(result.steps).to.equal(2);
    expect(probe.records[0]!.abortedAt).to.be.a('number');
    const toolResults: string[] = [];
    for await (const event of handle.events()) if (event.type === 'tool_result') toolResults.push(JSON.stringify(event));
    expect(toolResults.join('\n')).to.match(/timed out/);
  });

  it('bad timeouts are a TypeError at submit, before anything is queued', async () => {
    await start();
    for (const timeouts of [{ stepMs: -1 }, { stepMS: 10 }, { turnMs: Number.NaN }, 'fast']) {
      let thrown: unknown;
      try {
        await turns.submit({ tenant: 'acme', session: 's1', input: 'hello', options: { timeouts: timeouts as never } });
      } catch (error) {
        thrown = error;
      }
      expect(thrown, JSON.stringify(timeouts)).to.be.instanceOf(TypeError);
    }
  });

  it("a turn refused by its tenant's limits fails with a TurnFailedError whose cause is the TenantLimitError", async () => {
    await start({ requestsPerMinute: 1, onLimit: 'refuse' });
    await (await turns.submit({ tenant: 'acme', session: 's1', input: planInput({ label: 'first', steps: [] }) })).result();
    const error = await failureOf({ label: 'second', steps: [] }, {}, 's2');
    expect(error.errorName).to.equal('TenantLimitError');
    expect(TenantLimitError.isInstance(error.cause)).to.equal(true);
    expect(error.cause).to.deep.include({ tenant: 'acme', limit: 'requestsPerMinute', max: 1, current: 1, reason: 'refused' });
    expect((error.cause as TenantLimitError).retryAfterMs).to.be.within(1, 60_000);
  });
});
