import {
  ContextCorruptedError,
  LinearContext,
  textPart,
  toolCall,
  tokenUsage,
  type Message,
  type PendingStep,
} from '@kosong/core';
import { pendingStepFromJSON, pendingStepToJSON } from '@kosong/core/context-kit';
import { expect } from 'chai';
import { appendFile, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const user: Message = { role: 'user', content: [textPart('Deploy it.')] };
const assistant: Message = { role: 'assistant', content: [textPart('Deploying.')], toolCalls: [toolCall('d1', 'deploy', '{"env":"prod"}'), toolCall('s1', 'status', '{}')] };

function pending(overrides: Partial<PendingStep> = {}): PendingStep {
  return {
    stepId: 'step-1',
    step: 1,
    message: assistant,
    results: [undefined, { toolCallId: 's1', returnValue: { isError: false, output: [textPart('green'), { type: 'image_url', imageUrl: { url: 'data:,' } }], message: '', display: [{ type: 'brief', text: 'ok' }], extras: { ms: 3 } } }],
    usage: tokenUsage({ inputOther: 10, output: 7 }),
    turnUsage: tokenUsage(),
    messageId: 'msg-1',
    finishReason: 'tool_calls',
    deferredAt: 1_700_000_000_000,
    expiresAt: undefined,
    ...overrides,
  };
}

const line = (value: unknown): string => `${JSON.stringify(value)}\n`;
const message = (m: Message): Record<string, unknown> => ({ role: m.role, content: (m.content[0] as { text: string }).text });

describe('LinearContext: steps waiting for approval', () => {
  let dir: string;
  let path: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kosong-pending-'));
    path = join(dir, 'session.jsonl');
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  async function restoreError(): Promise<ContextCorruptedError> {
    const before = await readFile(path);
    const error = await new LinearContext(path).restore().catch((e: unknown) => e);
    expect(error).to.satisfy(ContextCorruptedError.isInstance);
    expect(await readFile(path)).to.deep.equal(before); // left byte for byte as it was
    return error as ContextCorruptedError;
  }

  it('a pending step round-trips through its wire form, every field', () => {
    const step = pending({ expiresAt: 1_700_000_060_000 });
    expect(pendingStepFromJSON(JSON.parse(JSON.stringify(pendingStepToJSON(step, 5))))).to.deep.equal(step);
    const text = pending({ results: [undefined, { toolCallId: 's1', returnValue: { isError: true, output: [textPart('one text part')], message: 'm', display: [] } }] });
    expect(pendingStepFromJSON(JSON.parse(JSON.stringify(pendingStepToJSON(text, 0))))).to.deep.equal(text);
  });

  it('writes one line per deferral and one append per completion; the file restores to the same state at each point', async () => {
    const context = new LinearContext(path);
    await context.append(user);
    await context.deferStep(pending());
    expect((await readFile(path, 'utf8')).trim().split('\n')).to.have.length(2);
    const midway = new LinearContext(path, { lock: false }); // a reader beside the writer, which holds the lock
    await midway.restore();
    expect(midway.pendingStep).to.deep.equal(pending());
    expect(midway.history).to.deep.equal([user]);

    const deniedAndOk: Message[] = [assistant, { role: 'tool', content: [textPart('denied')], toolCallId: 'd1' }, { role: 'tool', content: [textPart('green')], toolCallId: 's1' }];
    await context.completeStep('step-1', ...deniedAndOk);
    await context.close();
    const lines = (await readFile(path, 'utf8')).trim().split('\n');
    expect(lines).to.have.length(6);
    expect(JSON.parse(lines[2]!)).to.deep.equal({ role: '_step_resumed', token_count: 0, step_id: 'step-1' });
    const done = new LinearContext(path);
    await done.restore();
    expect(done.pendingStep).to.equal(undefined);
    expect(done.history).to.deep.equal([user, ...deniedAndOk]);
  });

  it('a later record of the same step replaces the earlier one; another step while one waits is refused', async () => {
    const context = new LinearContext(path);
    await context.deferStep(pending());
    const fewer = pending({ results: [undefined, undefined] });
    await context.deferStep(fewer);
    expect(await context.deferStep(pending({ stepId: 'other' })).catch((e: unknown) => e)).to.be.instanceOf(Error);
    expect(await context.completeStep('other').catch((e: unknown) => e)).to.be.instanceOf(Error);
    await context.close();
    const restored = new LinearContext(path);
    await restored.restore();
    expect(restored.pendingStep).to.deep.equal(fewer);
  });

  it('refuses a file with a malformed pending step, naming the line', async () => {
    const bad = { ...pendingStepToJSON(pending(), 0), results: [null] }; // one result for two calls
    await writeFile(path, line(message(user)) + line(bad));
    const error = await restoreError();
    expect(error.line).to.equal(2);
    expect(error.message).to.match(/1 results for 2 tool calls/);

    await writeFile(path, line(message(user)) + line({ ...pendingStepToJSON(pending(), 0), message: { role: 'assistant', content: [{ type: 'nope' }] } }));
    expect((await restoreError()).message).to.match(/pending step message/);
    await writeFile(path, line(message(user)) + line({ ...pendingStepToJSON(pending(), 0), results: [null, { tool_call_id: 'x', return_value: { is_error: false, output: '', message: '', display: [] } }] }));
    expect((await restoreError()).message).to.match(/result 1 is for call "x"/);
    const settled = (id: string): unknown => ({ tool_call_id: id, return_value: { is_error: false, output: '', message: '', display: [] } });
    await writeFile(path, line(message(user)) + line({ ...pendingStepToJSON(pending(), 0), results: [settled('d1'), settled('s1')] }));
    expect((await restoreError()).message).to.match(/no call waits for approval/);
  });

  it('refuses a completion of a step that does not wait, and a second step pending while one waits', async () => {
    await writeFile(path, line(message(user)) + line({ role: '_step_resumed', token_count: 0, step_id: 'ghost' }));
    expect((await restoreError()).message).to.match(/completes step "ghost", which does not wait/);
    await writeFile(path, line(pendingStepToJSON(pending(), 0)) + line(pendingStepToJSON(pending({ stepId: 'step-2' }), 0)));
    const error = await restoreError();
    expect(error.line).to.equal(2);
    expect(error.message).to.match(/second step waits/);
  });

  it('a writer that knows nothing of pending steps went on: the pending step is dropped, its messages kept', async () => {
    await writeFile(path, line(message(user)) + line(pendingStepToJSON(pending(), 3)) + line({ role: 'user', content: 'never mind' }) + line({ role: '_usage', token_count: 9 }));
    const context = new LinearContext(path);
    await context.restore();
    expect(context.pendingStep).to.equal(undefined);
    expect(context.history.map((m) => m.role)).to.deep.equal(['user', 'user']);
    expect(context.tokenCount).to.equal(9);
  });

  it('a pending step cut short by a crash is a torn tail: cut off and kept beside the file, nothing pending', async () => {
    const record = JSON.stringify(pendingStepToJSON(pending(), 0));
    await writeFile(path, line(message(user)));
    await appendFile(path, record.slice(0, record.length - 40));
    const context = new LinearContext(path);
    const report = await context.restore();
    expect(report).to.deep.include({ messages: 1, recoveredTornLine: true });
    expect(context.pendingStep).to.equal(undefined);
    expect(await readFile(path, 'utf8')).to.equal(line(message(user)));
    expect((await readdir(dir)).some((name) => name.startsWith('session.jsonl.torn-'))).to.equal(true);
  });

  it('a file that starts with a pending step is still a history file (the record starts like every record)', async () => {
    await writeFile(path, line(pendingStepToJSON(pending(), 0)));
    const context = new LinearContext(path);
    expect(await context.restore()).to.deep.include({ messages: 0 });
    expect(context.pendingStep?.stepId).to.equal('step-1');
  });
});
