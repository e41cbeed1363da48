/**
 * Approval of bash calls of queued turns (`kosong --redis`, real redis-server, a `kosong worker`
 * process): the worker defers them (its turn ends with `approval_required`), the CLI asks its user on
 * a terminal (or denies where nobody can be asked) and the turn goes on with `TurnQueue.resume`.
 */
import { RedisServer } from '@kosong/bullmq/testing';
import { expect } from 'chai';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { NOBODY_TO_ASK, NOBODY_TO_ASK_EDIT, NOBODY_TO_ASK_NOTICE, USER_DENIED } from '../approval/bash-approval.js';
import { jsonEvents, killLeftovers, makeWorkspace, runCli, startCli, toolCallLine, type CliProcess, type Workspace } from './cli-harness.js';
import { HAS_SCRIPT, KEY, PtyCli, killPtyLeftovers, stripEscapes } from './pty-harness.js';

const ANSWERS = '? [y]es / [n]o / [a]lways for this session';

/** The exit code of a turn that stopped at `--max-steps` (these runs stop after the step of the bash call). */
const STOPPED_AT_STEP_LIMIT = 3;

describe('kosong --redis: approval of bash calls on worker processes (real redis-server)', function () {
  this.timeout(60_000);
  let redis: RedisServer;
  let ws: Workspace;
  let worker: CliProcess | undefined;

  before(async () => {
    redis = await RedisServer.start();
  });
  after(async () => {
    await redis.stop();
  });
  beforeEach(async () => {
    ws = makeWorkspace();
    worker = startCli(['--redis', redis.url, '--provider', 'echo', 'worker', '--concurrency', '2'], ws.cwd);
    await worker.waitForStdout(/kosong worker \S+: provider echo, 2 turns at once/, 20_000);
  });
  afterEach(async () => {
    if (worker && worker.child.exitCode === null) {
      worker.child.kill('SIGTERM');
      await worker.waitForExit(15_000).catch(() => undefined);
    }
    worker = undefined;
    killPtyLeftovers();
    killLeftovers();
    ws.remove();
  });

  it('on a terminal: asks, and the turn goes on on the worker with the answers (y runs, n is denied)', async function () {
    if (!HAS_SCRIPT) this.skip(); // no util-linux `script` to make a pseudo-terminal with
    const script = [toolCallLine('b1', 'bash', { command: 'touch yes.txt' }), toolCallLine('b2', 'bash', { command: 'touch no.txt' })].join('\n');
    const cli = new PtyCli(['--redis', redis.url, '--max-steps', '1', 'run', script], ws.cwd, { columns: 200 });
    await cli.waitFor(`Run bash: touch yes.txt${ANSWERS}`, { timeoutMs: 20_000 });
    expect(existsSync(join(ws.cwd, 'yes.txt')), 'nothing runs before the answer').to.equal(false);
    cli.type(`y${KEY.enter}`);
    await cli.waitFor(`Run bash: touch no.txt${ANSWERS}`);
    cli.type(`n${KEY.enter}`);
    expect(await cli.waitForExit(30_000)).to.equal(STOPPED_AT_STEP_LIMIT);
    const screen = stripEscapes(cli.output).split(/\r*\n/).map((line) => line.slice(line.lastIndexOf('\r') + 1));
    expect(screen).to.include('✓ #1 bash: $ touch yes.txt');
    expect(screen).to.include(`✗ #2 bash: The tool call was denied: ${USER_DENIED}`);
    expect(existsSync(join(ws.cwd, 'yes.txt'))).to.equal(true);
    expect(existsSync(join(ws.cwd, 'no.txt'))).to.equal(false);
  });

  it('chat: Ctrl-C at the question leaves the call waiting; it is asked about again before the next message', async function () {
    if (!HAS_SCRIPT) this.skip(); // no util-linux `script` to make a pseudo-terminal with
    const cli = new PtyCli(['--redis', redis.url, '--max-steps', '1'], ws.cwd, { columns: 200 });
    await cli.waitForPrompt();
    cli.type(`${toolCallLine('b1', 'bash', { command: 'touch later.txt' })}${KEY.enter}`);
    await cli.waitFor(`Run bash: touch later.txt${ANSWERS}`, { timeoutMs: 20_000 });
    cli.type(KEY.ctrlC);
    const stopped = 'stopped: the calls above still wait for approval; you are asked about them again before your next message';
    await cli.waitFor(stopped);
    await cli.waitForPrompt(cli.output.indexOf(stopped));
    expect(existsSync(join(ws.cwd, 'later.txt'))).to.equal(false);
    const from = cli.output.length;
    cli.type(`text: hello${KEY.enter}`);
    await cli.waitFor(`Run bash: touch later.txt${ANSWERS}`, { from, timeoutMs: 20_000 });
    cli.type(`y${KEY.enter}`);
    await cli.waitFor(/\r\nhello\r\n/, { from, timeoutMs: 20_000 });
    cli.type(KEY.ctrlD);
    expect(await cli.waitForExit(20_000)).to.equal(0);
    const screen = stripEscapes(cli.output).split(/\r*\n/).map((line) => line.slice(line.lastIndexOf('\r') + 1));
    expect(screen).to.include('⏸ #1 bash: waits for approval');
    expect(screen).to.include('⏸ #1 bash({"command":"touch later.txt"}) waits for approval: it has not run');
    expect(screen).to.include('✓ #1 bash: $ touch later.txt');
    expect(existsSync(join(ws.cwd, 'later.txt'))).to.equal(true);
  });

  it('run stopped at the question leaves the call waiting in its session; the next run of that session decides it first', async function () {
    if (!HAS_SCRIPT) this.skip(); // no util-linux `script` to make a pseudo-terminal with
    const first = new PtyCli(['--redis', redis.url, '--session', 'kept', '--max-steps', '1', 'run', toolCallLine('b1', 'bash', { command: 'touch kept.txt' })], ws.cwd, {
      columns: 200,
    });
    await first.waitFor(`Run bash: touch kept.txt${ANSWERS}`, { timeoutMs: 20_000 });
    first.type(KEY.ctrlC);
    expect(await first.waitForExit(20_000)).to.equal(130);
    expect(existsSync(join(ws.cwd, 'kept.txt'))).to.equal(false);

    const next = new PtyCli(['--redis', redis.url, '--session', 'kept', '--max-steps', '1', 'run', 'text: afterwards'], ws.cwd, { columns: 200 });
    await next.waitFor(`Run bash: touch kept.txt${ANSWERS}`, { timeoutMs: 20_000 });
    next.type(`y${KEY.enter}`);
    expect(await next.waitForExit(20_000)).to.equal(0);
    const screen = stripEscapes(next.output).split(/\r*\n/).map((line) => line.slice(line.lastIndexOf('\r') + 1));
    expect(screen).to.include('calls of an earlier turn of this session wait for approval: deciding them first');
    expect(screen).to.include('✓ #1 bash: $ touch kept.txt');
    expect(screen).to.include('afterwards');
    expect(screen.join('\n')).not.to.include('ApprovalPendingError');
    expect(existsSync(join(ws.cwd, 'kept.txt'))).to.equal(true);
  });

  it('without a terminal: denied, the model told why, the user told once; --json shows the deferral and the denial', async () => {
    const script = toolCallLine('b1', 'bash', { command: 'touch no.txt' });
    const plain = await runCli(['--redis', redis.url, '--max-steps', '1', 'run', script], ws.cwd, { timeoutMs: 30_000 });
    expect(plain.code, plain.stderr).to.equal(STOPPED_AT_STEP_LIMIT);
    expect(plain.stdout).to.include(`${NOBODY_TO_ASK_NOTICE}\n`);
    expect(plain.stdout).to.include(`✗ #1 bash: The tool call was denied: ${NOBODY_TO_ASK}`);
    const json = await runCli(['--redis', redis.url, '--max-steps', '1', '--json', 'run', script], ws.cwd, { timeoutMs: 30_000 });
    expect(json.code, json.stderr).to.equal(STOPPED_AT_STEP_LIMIT);
    const events = jsonEvents(json.stdout);
    const decisions = events.filter((e) => e.type === 'approval_decision').map((e) => e.decision);
    expect(decisions).to.deep.equal([{ type: 'defer' }, { type: 'deny', reason: NOBODY_TO_ASK }]);
    expect(events.filter((e) => e.type === 'turn_end')).to.have.length(1);
    expect(events.at(-1)).to.include({ type: 'turn_end', stopReason: 'max_steps' });
    expect(existsSync(join(ws.cwd, 'no.txt'))).to.equal(false);
  });

  it("a worker's file changes wait for an approval too (a remote toolset carries no approval rules of its own: the worker names them)", async () => {
    const script = [toolCallLine('e1', 'edit_file', { path: 'notes.txt', old_string: 'first', new_string: 'FIRST' }), toolCallLine('w1', 'write_file', { path: 'new.txt', content: 'x' })].join('\n');
    const json = await runCli(['--redis', redis.url, '--max-steps', '1', '--json', 'run', script], ws.cwd, { timeoutMs: 30_000 });
    expect(json.code, json.stderr).to.equal(STOPPED_AT_STEP_LIMIT);
    const decisions = jsonEvents(json.stdout).filter((e) => e.type === 'approval_decision').map((e) => e.decision);
    expect(decisions).to.deep.equal([{ type: 'defer' }, { type: 'defer' }, { type: 'deny', reason: NOBODY_TO_ASK_EDIT }, { type: 'deny', reason: NOBODY_TO_ASK_EDIT }]);
    expect(readFileSync(join(ws.cwd, 'notes.txt'), 'utf8')).to.equal(ws.notes);
    expect(existsSync(join(ws.cwd, 'new.txt'))).to.equal(false);
  });
});
