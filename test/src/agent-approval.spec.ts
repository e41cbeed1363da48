import {
  Agent,
  ApprovalPendingError,
  LinearContext,
  NoPendingApprovalError,
  step,
  type AgentEvent,
  type AgentOptions,
  type ApprovalDecision,
  type ChatProvider,
  type Message,
  type Toolset,
} from '@kosong/core';
import { expect } from 'chai';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deployTools, planModel } from './approval-support.js';
import { deferred, sleep } from './support.js';

function agentOn(provider: ChatProvider, toolset: Toolset, extra: Partial<AgentOptions> = {}): Agent {
  return new Agent({ systemPrompt: 'You deploy.', step: (options) => step({ ...options, provider, toolset }), ...extra });
}

const text = (message: Message): string => message.content.map((p) => (p.type === 'text' ? p.text : '')).join('');

describe('Agent with approvals', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kosong-approval-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('a deferred call ends the turn with approval_required; resume runs it and goes on, the history holding whole steps only', async () => {
    const provider = planModel();
    const tools = deployTools();
    const agent = agentOn(provider, tools);
    const turn = await agent.run('Deploy it.');
    expect(turn.stopReason).to.equal('approval_required');
    expect(turn.steps).to.equal(1);
    expect(turn.pendingApprovals!.map((p) => [p.toolCall.id, p.index])).to.deep.equal([['d1', 0]]);
    expect(turn.usage).to.deep.include({ inputOther: 10, output: 7 });
    expect(tools.ran).to.deep.equal(['s1']); // the call that needed no approval ran
    expect(agent.context.history.map((m) => m.role)).to.deep.equal(['user']); // no half step
    expect(agent.context.pendingStep?.results.map((r) => r?.toolCallId)).to.deep.equal([undefined, 's1']);

    const events: AgentEvent[] = [];
    const resumed = await agent.resume({ decisions: { d1: { type: 'approve' } }, onEvent: (e) => void events.push(e) });
    expect(resumed.stopReason).to.equal('no_tool_calls');
    expect(resumed.steps).to.equal(2);
    expect(resumed.usage).to.deep.include({ inputOther: 15, output: 10 }); // both steps, counted once
    expect(tools.ran).to.deep.equal(['s1', 'd1']); // s1 did not run again
    expect(provider.calls).to.equal(2);
    expect(agent.context.pendingStep).to.equal(undefined);
    const history = agent.context.history;
    expect(history.map((m) => m.role)).to.deep.equal(['user', 'assistant', 'tool', 'tool', 'assistant']);
    expect(history.slice(2, 4).map((m) => m.toolCallId)).to.deep.equal(['d1', 's1']); // call order
    expect(text(history[4]!)).to.equal('Done: deploy ok | status ok');
    const types = events.map((e) => e.type);
    expect(types.slice(0, 4)).to.deep.equal(['step_start', 'tool_call', 'approval_decision', 'tool_result']);
    expect(events.find((e) => e.type === 'step_end')).to.deep.include({ step: 1 });
  });

  it('a denial goes back to the model as an error result, with the reason', async () => {
    const tools = deployTools();
    const agent = agentOn(planModel(), tools);
    await agent.run('Deploy it.');
    const resumed = await agent.resume({ decisions: { d1: { type: 'deny', reason: 'change freeze until Monday' } } });
    expect(tools.ran).to.deep.equal(['s1']);
    const denial = agent.context.history[2]!;
    expect(denial.toolCallId).to.equal('d1');
    expect(text(denial)).to.equal('<system>ERROR: The tool call was denied: change freeze until Monday</system>');
    expect(resumed.message.content[0]).to.deep.include({ type: 'text' });
  });

  it('refuses a new turn while a step waits, and resume with nothing pending or a call that does not wait', async () => {
    const agent = agentOn(planModel(), deployTools());
    expect(await agent.resume().catch((e: unknown) => e)).to.satisfy(NoPendingApprovalError.isInstance);
    await agent.run('Deploy it.');
    const before = agent.context.history.length;
    const refused = await agent.run('something else').catch((e: unknown) => e);
    expect(refused).to.satisfy(ApprovalPendingError.isInstance);
    expect((refused as ApprovalPendingError).pending.map((p) => p.toolCall.id)).to.deep.equal(['d1']);
    expect((refused as Error).message).to.match(/deploy \(d1\)/);
    expect(agent.context.history.length).to.equal(before);
    expect(await agent.resume({ decisions: { s1: { type: 'approve' } } }).catch((e: unknown) => e)).to.satisfy(NoPendingApprovalError.isInstance);
    expect(await agent.resume({ decisions: { d1: 'yes' as unknown as ApprovalDecision } }).catch((e: unknown) => e)).to.be.instanceOf(TypeError);
    expect(await agent.context.append({ role: 'user', content: [] }).catch((e: unknown) => e)).to.satisfy(ApprovalPendingError.isInstance);
    expect(agent.context.pendingStep).not.to.equal(undefined); // still there after the refusals
  });

  it('a live handler decides without ending the turn, and its events come in order', async () => {
    const tools = deployTools();
    const asked: string[] = [];
    const agent = agentOn(planModel(), tools, { onApproval: (r) => (asked.push(r.toolCall.id), { type: 'approve' }) });
    const events: AgentEvent[] = [];
    const turn = await agent.run('Deploy it.', { onEvent: (e) => void events.push(e) });
    expect(turn.stopReason).to.equal('no_tool_calls');
    expect(asked).to.deep.equal(['d1']);
    expect(tools.ran).to.have.members(['d1', 's1']);
    const approval = events.filter((e) => e.type.startsWith('approval'));
    expect(approval.map((e) => e.type)).to.deep.equal(['approval_request', 'approval_decision']);
    expect(approval[1]).to.deep.include({ step: 1, index: 0, decision: { type: 'approve' } });
    // A turn's own handler wins over the agent's.
    const agent2 = agentOn(planModel(), deployTools(), { onApproval: () => ({ type: 'approve' }) });
    expect((await agent2.run('Deploy.', { onApproval: () => ({ type: 'defer' }) })).stopReason).to.equal('approval_required');
  });

  it('a resume with a call left undecided asks the handler, which may defer it again; a later resume completes the step', async () => {
    const provider = planModel();
    const inner = deployTools();
    const toolset = { ...inner, tools: inner.tools, handle: inner.handle.bind(inner), needsApproval: () => true }; // both calls need approval
    const agent = agentOn(provider, toolset);
    const first = await agent.run('Deploy it.');
    expect(first.pendingApprovals!.map((p) => p.toolCall.id)).to.deep.equal(['d1', 's1']);
    const second = await agent.resume({ decisions: { s1: { type: 'approve' } } });
    expect(second.stopReason).to.equal('approval_required');
    expect(second.steps).to.equal(1);
    expect(second.pendingApprovals!.map((p) => p.toolCall.id)).to.deep.equal(['d1']);
    expect(inner.ran).to.deep.equal(['s1']);
    expect(agent.context.history.map((m) => m.role)).to.deep.equal(['user']);
    const third = await agent.resume({ decisions: { d1: { type: 'approve' } } });
    expect(third.stopReason).to.equal('no_tool_calls');
    expect(inner.ran).to.deep.equal(['s1', 'd1']);
    expect(provider.calls).to.equal(2);
  });

  it('a deferred call whose approvalTimeoutMs passed is denied as timed out, whatever the decision', async () => {
    const tools = deployTools();
    const agent = agentOn(planModel(), tools, { approvalTimeoutMs: 1 });
    const turn = await agent.run('Deploy it.');
    expect(agent.context.pendingStep!.expiresAt).to.equal(agent.context.pendingStep!.deferredAt + 1);
    expect(turn.stopReason).to.equal('approval_required');
    await sleep(10);
    await agent.resume({ decisions: { d1: { type: 'approve' } } });
    expect(tools.ran).to.deep.equal(['s1']);
    expect(text(agent.context.history[2]!)).to.match(/denied: nobody decided about it within 1 ms/);
  });

  it('aborting a resume while the approved call runs reclaims it and leaves the step pending', async () => {
    const gate = deferred();
    let aborted = false;
    const toolset: Toolset = {
      tools: deployTools().tools,
      needsApproval: (call) => call.function.name === 'deploy',
      handle: async (call, { signal }) => {
        if (call.function.name === 'deploy') {
          signal.addEventListener('abort', () => {
            aborted = true;
            gate.resolve();
          });
          await gate.promise;
          throw signal.reason;
        }
        return { toolCallId: call.id, returnValue: { isError: false, output: 'status ok', message: '', display: [] } };
      },
    };
    const agent = agentOn(planModel(), toolset);
    await agent.run('Deploy it.');
    const controller = new AbortController();
    const resuming = agent.resume({ decisions: { d1: { type: 'approve' } }, signal: controller.signal });
    await sleep(5);
    controller.abort(new Error('stop'));
    expect(((await resuming.catch((e: unknown) => e)) as Error).message).to.equal('stop');
    expect(aborted).to.equal(true);
    expect(agent.context.pendingStep?.stepId).to.be.a('string');
    expect(agent.context.history.map((m) => m.role)).to.deep.equal(['user']);
  });

  it('refuses a step function that does not pass resume on to step()', async () => {
    const provider = planModel();
    const tools = deployTools();
    const agent = new Agent({ systemPrompt: '', step: ({ systemPrompt, history, signal }) => step({ systemPrompt, history, provider, toolset: tools, ...(signal ? { signal } : {}) }) });
    await agent.run('Deploy it.');
    const error = await agent.resume({ decisions: { d1: { type: 'approve' } } }).catch((e: unknown) => e);
    expect((error as Error).message).to.match(/did not complete the step it was given/);
    expect(agent.context.history.map((m) => m.role)).to.deep.equal(['user']);
  });

  describe('in a JSONL session file', () => {
    it('survives in the file: a new context restores the pending step and resumes it', async () => {
      const path = join(dir, 'session.jsonl');
      const tools = deployTools();
      const context = new LinearContext(path);
      const agent = agentOn(planModel(), tools, { context });
      await agent.run('Deploy it.');
      await context.close();

      const restored = new LinearContext(path);
      expect(await restored.restore()).to.deep.include({ messages: 1 });
      expect(restored.pendingStep).to.deep.equal(context.pendingStep);
      const later = agentOn(planModel(), tools, { context: restored });
      const result = await later.resume({ decisions: { d1: { type: 'approve' } } });
      expect(result.stopReason).to.equal('no_tool_calls');
      expect(tools.ran).to.deep.equal(['s1', 'd1']);
      await restored.close();

      const again = new LinearContext(path);
      await again.restore();
      expect(again.pendingStep).to.equal(undefined);
      expect(again.history).to.deep.equal(restored.history);
    });

    it('readers that know nothing of pending steps (the Python kosong rule) see whole steps only, and the right token count', async () => {
      const path = join(dir, 'session.jsonl');
      const context = new LinearContext(path);
      await context.markTokenCount(42);
      const agent = agentOn(planModel(), deployTools(), { context });
      await agent.run('Deploy it.');
      const pythonView = async (): Promise<{ roles: string[]; tokens: number }> => {
        const roles: string[] = [];
        let tokens = 0;
        for (const line of (await readFile(path, 'utf8')).split('\n').filter((l) => l.trim() !== '')) {
          const record = JSON.parse(line) as Record<string, unknown>;
          if ('token_count' in record) tokens = record['token_count'] as number;
          else roles.push(record['role'] as string);
        }
        return { roles, tokens };
      };
      expect(await pythonView()).to.deep.equal({ roles: ['user'], tokens: 42 });
      await agent.resume({ decisions: { d1: { type: 'approve' } } });
      expect(await pythonView()).to.deep.equal({ roles: ['user', 'assistant', 'tool', 'tool', 'assistant'], tokens: 42 });
      await context.close();
    });
  });
});
