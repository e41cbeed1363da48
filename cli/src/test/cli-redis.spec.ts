/**
 * `kosong worker --redis` and `kosong --redis run|chat`: turns submitted to a real redis-server and
 * run by a worker process, rendered exactly as a local run.
 */
import { rmSync } from 'node:fs';
import { RedisServer } from '@kosong/bullmq/testing';
import { ChatCompletionsServer } from '@kosong/provider-openai/testing';
import { expect } from 'chai';
import { killLeftovers, makeWorkspace, runCli, startCli, type CliProcess, type Workspace } from './cli-harness.js';

const PROMPT = 'Show me around this project';

describe('kosong with --redis: turns on worker processes (real redis-server)', function () {
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
  beforeEach(() => {
    ws = makeWorkspace();
  });
  afterEach(async () => {
    if (worker && worker.child.exitCode === null) {
      worker.child.kill('SIGTERM');
      await worker.waitForExit(15_000).catch(() => undefined);
    }
    worker = undefined;
    killLeftovers();
    rmSync(ws.base, { recursive: true, force: true });
  });

  async function startWorker(): Promise<CliProcess> {
    worker = startCli(['--redis', redis.url, 'worker', '--concurrency', '2'], ws.cwd);
    await worker.waitForStdout(/kosong worker \S+: provider demo, 2 turns at once/, 20_000);
    return worker;
  }

  it('run --redis renders the turn exactly as a local run does; the worker stops cleanly on SIGTERM', async () => {
    const local = await runCli(['run', PROMPT], ws.cwd, { timeoutMs: 30_000 });
    expect(local.code, local.stderr).to.equal(0);
    const running = await startWorker();
    const remote = await runCli(['--redis', redis.url, 'run', PROMPT], ws.cwd, { timeoutMs: 30_000 });
    expect(remote.code, remote.stderr).to.equal(0);
    expect(sameRun(remote.stdout)).to.deep.equal(sameRun(local.stdout));
    const second = await runCli(['--redis', redis.url, '--json', 'run', PROMPT], ws.cwd, { timeoutMs: 30_000 });
    expect(second.code, second.stderr).to.equal(0);
    expect(second.stdout).to.match(/"type":"turn_end"/);
    running.child.kill('SIGTERM');
    const exit = await running.waitForExit(15_000);
    expect(exit.code).to.equal(0);
  });

  it('Ctrl-C cancels the remote turn: exit 130, and the worker goes on with the next turn', async () => {
    await startWorker();
    const cli = startCli(['--redis', redis.url, 'run', PROMPT], ws.cwd);
    await cli.waitForStdout('thinking:', 20_000);
    cli.interrupt();
    const exit = await cli.waitForExit(15_000);
    expect(exit.code, exit.stderr).to.equal(130);
    expect(exit.stdout).to.include('⏹ interrupted');
    expect(exit.stdout).to.not.include('— 3 steps');
    const next = await runCli(['--redis', redis.url, 'run', PROMPT], ws.cwd, { timeoutMs: 30_000 });
    expect(next.code, next.stderr).to.equal(0);
    expect(next.stdout).to.include('— 3 steps');
  });

  it('the worker runs its turns with the model of --model; it refuses flags it cannot honour (exit 2), never ignores them', async () => {
    const server = await ChatCompletionsServer.start();
    try {
      const env = { OPENAI_API_KEY: 'sk-worker-model-0123456789abcdef', OPENAI_BASE_URL: server.baseURL };
      worker = startCli(['--redis', redis.url, '--provider', 'openai', '--model', 'model-from-the-flag', 'worker'], ws.cwd, env);
      await worker.waitForStdout(/kosong worker \S+: provider openai \(model model-from-the-flag\)/, 20_000);
      const turn = await runCli(['--redis', redis.url, 'run', 'hi'], ws.cwd, { timeoutMs: 30_000 });
      expect(turn.code, turn.stderr).to.equal(0);
      expect(turn.stdout).to.include('Hello from the test server.');
      expect((server.lastRequest.body as { model?: string }).model).to.equal('model-from-the-flag');
    } finally {
      await server.close();
    }
    for (const [args, flags] of [
      [['--max-tokens', '5'], '--max-tokens is'],
      [['--temperature', '0.5', '--json'], '--temperature, --json are'],
      [['--session', 'x.jsonl'], '--session is'],
    ] as const) {
      const refused = await runCli(['--redis', redis.url, ...args, 'worker'], ws.cwd);
      expect(refused.code, refused.stderr).to.equal(2);
      expect(refused.stderr).to.include(`kosong worker: ${flags} not supported by the worker`);
    }
    const oneModel = await runCli(['--redis', redis.url, '--provider', 'echo', '--model', 'x', 'worker'], ws.cwd);
    expect(oneModel.code).to.equal(2);
    expect(oneModel.stderr).to.include('the echo provider has one model');
  });

  it('refuses a worker without --redis (exit 2), and a Redis that is not there fails the turn clearly (exit 1)', async () => {
    const noRedis = await runCli(['worker'], ws.cwd);
    expect(noRedis.code).to.equal(2);
    expect(noRedis.stderr).to.include('kosong worker needs --redis <url>');
    const gone = await runCli(['--redis', 'redis://127.0.0.1:1', 'run', PROMPT], ws.cwd, { timeoutMs: 30_000 });
    expect(gone.code).to.equal(1);
    expect(gone.stdout + gone.stderr).to.include('RedisUnavailableError: Cannot submit the turn: Redis is unreachable');
  });
});

/**
 * What a run shows, up to timing: tool results land between streamed text wherever they finish (as
 * in a local run), so the text is compared without line breaks, and the results as a set.
 */
function sameRun(stdout: string): { text: string; results: string[] } {
  const lines = stdout.split('\n');
  const isResult = (line: string): boolean => line.startsWith('✓ ') || line.startsWith('✗ ');
  return { text: lines.filter((l) => !isResult(l)).join(''), results: lines.filter(isResult).sort() };
}
