import { LinearContext } from '@kosong/core';
import { expect } from 'chai';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startNode, until, type Child } from './child-process.js';

const CHILD = fileURLToPath(new URL('./fixtures/approval-session-child.js', import.meta.url));

function start(args: readonly string[]): Child {
  return startNode(CHILD, args);
}

describe('approvals across a restart', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kosong-approval-restart-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('a process killed while calls wait for approval, and a new one that resumes the turn from the same session file', async function () {
    this.timeout(20_000);
    const session = join(dir, 'session.jsonl');
    const log = join(dir, 'tools.log');
    const first = start(['defer', session, log]);
    await until(() => first.output().includes('waiting\n'), 'the first process to defer');
    const deferredTurn = JSON.parse(first.output().split('\n')[0]!) as { stopReason: string; pendingApprovals: { toolCall: { id: string } }[] };
    expect(deferredTurn.stopReason).to.equal('approval_required');
    expect(deferredTurn.pendingApprovals.map((p) => p.toolCall.id)).to.deep.equal(['d1']);
    first.child.kill('SIGKILL');
    await first.exited;

    const second = start(['resume', session, log, JSON.stringify({ d1: { type: 'approve' } })]);
    expect(await second.exited).to.equal(0, second.output());
    const resumed = JSON.parse(second.output().trim()) as { stopReason: string; steps: number; usage: { inputOther: number } };
    expect(resumed).to.deep.include({ stopReason: 'no_tool_calls', steps: 2 });
    expect(resumed.usage.inputOther).to.equal(15); // the first process's step counted too

    // Each call ran once: the one that needed no approval in the first process, the approved one in the second.
    const runs = (await readFile(log, 'utf8')).trim().split('\n').map((line) => line.split(' '));
    expect(runs.map(([, id]) => id)).to.deep.equal(['s1', 'd1']);
    expect(runs[0]![0]).to.equal(String(first.child.pid));
    expect(runs[1]![0]).to.equal(String(second.child.pid));

    const context = new LinearContext(session);
    await context.restore();
    expect(context.pendingStep).to.equal(undefined);
    expect(context.history.map((m) => m.role)).to.deep.equal(['user', 'assistant', 'tool', 'tool', 'assistant']);
    await context.close(); // releases the session's lock for the third process

    // Nothing waits any more: a third process has nothing to resume, and the file stays as it is.
    const before = await readFile(session);
    const third = start(['resume', session, log, '{}']);
    expect(await third.exited).to.not.equal(0);
    expect(third.output()).to.match(/NoPendingApprovalError|nothing to resume/);
    expect(await readFile(session)).to.deep.equal(before);
  });
});
