/**
 * Signed approvals from the command line (issue 21 item 4): `kosong worker` and `kosong --redis`
 * take the approval secret from KOSONG_APPROVAL_SECRET. A worker with it runs a deferred bash call
 * only on a decision signed with it; a submitter without it is refused (the call still waits, the
 * user is told which variable to set); a worker without it warns at start.
 */
import { RedisServer } from '@kosong/bullmq/testing';
import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { UNSIGNED_APPROVALS_WARNING } from '../approval-secret.js';
import { killLeftovers, makeWorkspace, runCli, sleep, startCli, toolCallLine, type CliProcess, type Workspace } from './cli-harness.js';
import { HAS_SCRIPT, KEY, PtyCli, killPtyLeftovers, stripEscapes } from './pty-harness.js';

const ANSWERS = '? [y]es / [n]o / [a]lways for this session';
const SECRET = { KOSONG_APPROVAL_SECRET: 'a-secret-shared-by-workers-and-submitters' };

describe('kosong --redis: approvals signed with KOSONG_APPROVAL_SECRET (real redis-server)', function () {
  this.timeout(90_000);
  let redis: RedisServer;
  let ws: Workspace;
  const workers: CliProcess[] = [];

  before(async () => {
    redis = await RedisServer.start();
  });
  after(async () => {
    await redis.stop();
  });
  beforeEach(() => {
    ws = makeWorkspace();
  });
  afterEach(async () => {
    for (const worker of workers.splice(0)) {
      if (worker.child.exitCode !== null) continue;
      worker.child.kill('SIGTERM');
      await worker.waitForExit(15_000).catch(() => undefined);
    }
    killPtyLeftovers();
    killLeftovers();
    ws.remove();
  });

  async function worker(env: Readonly<Record<string, string>>): Promise<CliProcess> {
    const started = startCli(['--redis', redis.url, '--provider', 'echo', 'worker', '--concurrency', '2'], ws.cwd, env);
    workers.push(started);
    await started.waitForStdout(/kosong worker \S+: provider echo, 2 turns at once/, 20_000);
    return started;
  }

  it('a submitter without the secret is refused (the call still waits, it has not run); with it, the same call runs once approved', async function () {
    if (!HAS_SCRIPT) this.skip(); // no util-linux `script` to make a pseudo-terminal with
    const signed = await worker(SECRET);
    const touch = toolCallLine('b1', 'bash', { command: 'touch approved.txt' });
    const unsigned = new PtyCli(['--redis', redis.url, '--session', 's', '--max-steps', '1', 'run', touch], ws.cwd, { columns: 240, env: { KOSONG_APPROVAL_SECRET: undefined } });
    await unsigned.waitFor(`Run bash: touch approved.txt${ANSWERS}`, { timeoutMs: 20_000 });
    unsigned.type(`y${KEY.enter}`);
    expect(await unsigned.waitForExit(30_000)).to.equal(1);
    const refused = stripEscapes(unsigned.output);
    expect(refused).to.include('ApprovalSignatureError');
    expect(refused).to.include("they are not signed (the submitter's TurnQueue has no approvalSecret)");
    expect(refused).to.include("(KOSONG_APPROVAL_SECRET must be the worker's)");
    expect(existsSync(join(ws.cwd, 'approved.txt')), 'the unsigned approval ran nothing').to.equal(false);

    // The call still waits in the session: the next run, with the secret, decides it first.
    const next = new PtyCli(['--redis', redis.url, '--session', 's', '--max-steps', '1', 'run', 'text: afterwards'], ws.cwd, { columns: 240, env: SECRET });
    await next.waitFor(`Run bash: touch approved.txt${ANSWERS}`, { timeoutMs: 20_000 });
    next.type(`y${KEY.enter}`);
    expect(await next.waitForExit(30_000)).to.equal(0);
    const screen = stripEscapes(next.output).split(/\r*\n/).map((line) => line.slice(line.lastIndexOf('\r') + 1));
    expect(screen).to.include('✓ #1 bash: $ touch approved.txt');
    expect(existsSync(join(ws.cwd, 'approved.txt'))).to.equal(true);
    expect(signed.stderr, 'a worker with the secret does not warn').not.to.include('KOSONG_APPROVAL_SECRET');
  });

  it('a worker that defers bash calls without the secret warns at start; with --allow-bash it does not; a secret too short is a setup error (exit 2)', async () => {
    const unsigned = await worker({});
    for (let waited = 0; !unsigned.stderr.includes('KOSONG_APPROVAL_SECRET') && waited < 5_000; waited += 50) await sleep(50);
    expect(unsigned.stderr).to.include(`kosong worker: ${UNSIGNED_APPROVALS_WARNING}\n`);
    const allowBash = startCli(['--redis', redis.url, '--provider', 'echo', '--allow-bash', 'worker'], ws.cwd);
    workers.push(allowBash);
    await allowBash.waitForStdout(/kosong worker \S+: provider echo/, 20_000);
    expect(allowBash.stderr).not.to.include('KOSONG_APPROVAL_SECRET');

    const short = { KOSONG_APPROVAL_SECRET: 'short' };
    const tooShort = await runCli(['--redis', redis.url, '--provider', 'echo', 'worker'], ws.cwd, { env: short, timeoutMs: 20_000 });
    expect(tooShort.code).to.equal(2);
    expect(tooShort.stderr).to.include('KOSONG_APPROVAL_SECRET must be at least 16 bytes long');
    const submitter = await runCli(['--redis', redis.url, 'run', 'text: hi'], ws.cwd, { env: short, timeoutMs: 20_000 });
    expect(submitter.code).to.equal(2);
    expect(submitter.stderr).to.include('kosong: KOSONG_APPROVAL_SECRET must be at least 16 bytes long');
  });
});
