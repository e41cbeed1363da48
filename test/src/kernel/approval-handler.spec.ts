import {
  ApprovalHandler,
  Kernel,
  TenantId,
  definePlugin,
  requireApproval,
  type ApprovalDecision,
  type ApprovalRequest,
  type HookErrorReport,
} from '@kosong/core';
import { MockChatProvider } from '@kosong/provider-echo';
import { expect } from 'chai';
import { inject, injectable } from 'inversify';
import { deployTools, planModel } from '../approval-support.js';
import { base, call, spyToolset } from './support.js';

/** A handler that records what it was asked and answers `decision`. */
function recordingHandler(label: string, decision: ApprovalDecision, delayMs = 0): ApprovalHandler & { readonly asked: ApprovalRequest[]; readonly label: string } {
  const asked: ApprovalRequest[] = [];
  return {
    label,
    asked,
    decide: async (request) => {
      asked.push(request);
      if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
      return decision;
    },
  };
}

async function kernelWith(...handlers: ApprovalHandler[]): Promise<{ kernel: Kernel; tools: ReturnType<typeof spyToolset>; errors: HookErrorReport[] }> {
  const kernel = new Kernel();
  const tools = spyToolset('global');
  const errors: HookErrorReport[] = [];
  await kernel.use(
    definePlugin({
      name: 'model',
      setup: (ctx) => {
        ctx.bindChatProvider('mock', new MockChatProvider([call('c1'), call('c2')]), { default: true });
        ctx.bindToolset(requireApproval(tools));
        ctx.bindHookErrorSink({ report: (r) => void errors.push(r) });
      },
    }),
    ...handlers.map((handler, i) => definePlugin({ name: `approvals-${i}`, setup: (ctx) => ctx.bindApprovalHandler(handler) })),
  );
  return { kernel, tools, errors };
}

const outputs = async (promise: Promise<{ toolResults(): Promise<readonly { returnValue: { isError: boolean; message: string } }[]> }>): Promise<string[]> =>
  (await (await promise).toolResults()).map((r) => (r.returnValue.isError ? `error: ${r.returnValue.message}` : 'ran'));

describe('kernel: ApprovalHandler', () => {
  it('the bound handler decides for the kernel\'s steps (the last bound wins); a runner\'s onApproval wins over it', async () => {
    const first = recordingHandler('first', { type: 'deny', reason: 'first' });
    const last = recordingHandler('last', { type: 'approve' });
    const { kernel, tools } = await kernelWith(first, last);
    expect(await outputs(kernel.runner().step(base))).to.deep.equal(['ran', 'ran']);
    expect(first.asked).to.have.length(0);
    expect(last.asked.map((r) => r.toolCall.id)).to.deep.equal(['c1', 'c2']);
    expect(tools.handle.callCount).to.equal(2);
    expect(await outputs(kernel.runner().step({ ...base, onApproval: () => ({ type: 'deny', reason: 'per step' }) }))).to.deep.equal([
      'error: The tool call was denied: per step',
      'error: The tool call was denied: per step',
    ]);
    expect(last.asked).to.have.length(2);
    await kernel.dispose();
  });

  it('without a handler, calls that need approval are deferred', async () => {
    const { kernel, tools } = await kernelWith();
    const results = await (await kernel.runner().step(base)).toolResults();
    expect(results.map((r) => r.deferred)).to.deep.equal([true, true]);
    expect(tools.handle.callCount).to.equal(0);
    await kernel.dispose();
  });

  it('tenant isolation: each tenant\'s handler decides its own calls only, under concurrency; a tenant without one gets the global handler', async () => {
    const global = recordingHandler('global', { type: 'deny', reason: 'global says no' }, 2);
    const { kernel } = await kernelWith(global);
    const handlers = { acme: recordingHandler('acme', { type: 'approve' }, 3), globex: recordingHandler('globex', { type: 'deny', reason: 'globex says no' }, 1) };
    kernel.tenants.define('acme', { toolset: requireApproval(spyToolset('acme')), module: (ctx) => void ctx.bind(ApprovalHandler).toConstantValue(handlers.acme) });
    kernel.tenants.define('globex', { toolset: requireApproval(spyToolset('globex')), module: (ctx) => void ctx.bind(ApprovalHandler).toConstantValue(handlers.globex) });
    kernel.tenants.define('initech', { toolset: requireApproval(spyToolset('initech')) });
    const runs = Array.from({ length: 30 }, (_, i) => {
      const tenant = (['acme', 'globex', 'initech'] as const)[i % 3]!;
      return outputs(kernel.runner({ tenant }).step(base)).then((results) => ({ tenant, results }));
    });
    for (const { tenant, results } of await Promise.all(runs)) {
      const expected = { acme: 'ran', globex: 'error: The tool call was denied: globex says no', initech: 'error: The tool call was denied: global says no' }[tenant];
      expect(results).to.deep.equal([expected, expected]);
    }
    expect(handlers.acme.asked.every((r) => r.tenant === 'acme')).to.equal(true);
    expect(handlers.globex.asked.every((r) => r.tenant === 'globex')).to.equal(true);
    expect(global.asked.every((r) => r.tenant === 'initech')).to.equal(true);
    expect([handlers.acme.asked.length, handlers.globex.asked.length, global.asked.length]).to.deep.equal([20, 20, 20]);
    await kernel.dispose();
  });

  it('a tenant-only class handler is created per tenant with its dependencies; steps without a tenant have none', async () => {
    @injectable()
    class TenantPolicy implements ApprovalHandler {
      static readonly asked: [string, string][] = [];
      constructor(@inject(TenantId) private readonly tenant: string) {}
      decide(request: ApprovalRequest): ApprovalDecision {
        TenantPolicy.asked.push([this.tenant, request.tenant ?? '-']);
        return this.tenant === 'acme' ? { type: 'approve' } : { type: 'deny', reason: `${this.tenant} policy` };
      }
    }
    const kernel = new Kernel();
    await kernel.use(
      definePlugin({
        name: 'setup',
        setup: (ctx) => {
          ctx.bindChatProvider('mock', new MockChatProvider([call('c1')]), { default: true });
          ctx.bindToolset(requireApproval(spyToolset('global')));
          ctx.bindApprovalHandler(TenantPolicy, { tenantOnly: true });
        },
      }),
    );
    kernel.tenants.define('acme', {});
    kernel.tenants.define('globex', {});
    expect(await outputs(kernel.runner({ tenant: 'acme' }).step(base))).to.deep.equal(['ran']);
    expect(await outputs(kernel.runner({ tenant: 'globex' }).step(base))).to.deep.equal(['error: The tool call was denied: globex policy']);
    expect((await (await kernel.runner().step(base)).toolResults())[0]!.deferred).to.equal(true);
    expect(TenantPolicy.asked).to.deep.equal([
      ['acme', 'acme'],
      ['globex', 'globex'],
    ]);
    await kernel.dispose();
  });

  it('a throwing handler is reported to the kernel\'s sink and denies the call', async () => {
    const { kernel, tools, errors } = await kernelWith({
      decide: () => {
        throw new Error('policy service down');
      },
    });
    expect(await outputs(kernel.runner().step(base))).to.deep.equal([
      'error: The tool call was denied: no decision could be made about it (the approval handler failed)',
      'error: The tool call was denied: no decision could be made about it (the approval handler failed)',
    ]);
    expect(tools.handle.callCount).to.equal(0);
    expect(errors.map((e) => [e.hook, e.kind, (e.error as Error).message])).to.deep.equal([
      ['onApproval', 'threw', 'policy service down'],
      ['onApproval', 'threw', 'policy service down'],
    ]);
    await kernel.dispose();
  });

  it('kernel.agent: a deferred call ends the turn; resume with decisions completes it on the same kernel', async () => {
    const kernel = new Kernel();
    const tools = deployTools();
    await kernel.use(definePlugin({ name: 'setup', setup: (ctx) => (ctx.bindChatProvider('plan', planModel()), ctx.bindToolset(tools)) }));
    const agent = kernel.agent({ systemPrompt: '' });
    const turn = await agent.run('Deploy it.');
    expect(turn.stopReason).to.equal('approval_required');
    expect(tools.ran).to.deep.equal(['s1']);
    const done = await agent.resume({ decisions: { d1: { type: 'approve' } } });
    expect(done).to.deep.include({ stopReason: 'no_tool_calls', steps: 2 });
    expect(tools.ran).to.deep.equal(['s1', 'd1']);
    await kernel.dispose();
  });
});
