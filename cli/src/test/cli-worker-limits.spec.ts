/**
 * `kosong worker --config`: the tenants a worker runs turns for, held to their limits in Redis
 * (`RedisGovernance`), every step recorded in the Redis usage ledger (`kosong usage --redis`).
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TenantLimitError } from '@kosong/core';
import { TurnFailedError, TurnQueue } from '@kosong/bullmq';
import { RedisServer } from '@kosong/bullmq/testing';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { killLeftovers, makeWorkspace, runCli, startCli, type CliProcess, type Workspace } from './cli-harness.js';

const PROMPT = 'Show me around this project';

describe('kosong worker --config: tenant limits in Redis (real redis-server, worker processes)', function () {
  this.timeout(90_000);
  let redis: RedisServer;
  let admin: Redis;
  let ws: Workspace;
  const workers: CliProcess[] = [];
  let turns: TurnQueue | undefined;

  before(async () => {
    redis = await RedisServer.start();
    admin = new Redis(redis.url);
  });
  after(async () => {
    admin.disconnect();
    await redis.stop();
  });
  beforeEach(async () => {
    ws = makeWorkspace();
    await admin.flushall();
  });
  afterEach(async () => {
    await turns?.close();
    turns = undefined;
    for (const worker of workers.splice(0)) {
      if (worker.child.exitCode !== null) continue;
      worker.child.kill('SIGTERM');
      await worker.waitForExit(15_000).catch(() => undefined);
    }
    killLeftovers();
    rmSync(ws.base, { recursive: true, force: true });
  });

  function config(content: unknown): string {
    const file = join(ws.base, 'worker.json');
    writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
    return file;
  }

  async function startWorker(file: string): Promise<CliProcess> {
    const worker = startCli(['--redis', redis.url, '--allow-bash', 'worker', '--concurrency', '2', '--config', file], ws.cwd);
    workers.push(worker);
    await worker.waitForStdout(/kosong worker \S+: provider demo, 2 turns at once/, 20_000);
    return worker;
  }

  it("holds a tenant to its limits across two workers, counted in Redis; every step is in the Redis ledger that kosong usage --redis reads", async () => {
    // The demo's turn is 3 steps (3 model requests): 4 a minute let one turn and the first step of the next through.
    const file = config({ tenants: { acme: { limits: { requestsPerMinute: 4, onLimit: 'refuse' } }, beta: {} } });
    await startWorker(file);
    await startWorker(file);
    turns = new TurnQueue({ connection: redis.url });
    const first = await turns.submit({ tenant: 'acme', session: 'acme-1', input: PROMPT });
    expect((await first.result()).stopReason).to.equal('no_tool_calls');
    const second = await turns.submit({ tenant: 'acme', session: 'acme-2', input: PROMPT });
    const failure = await second.result().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(TurnFailedError.isInstance(failure), String(failure)).to.equal(true);
    const cause = (failure as TurnFailedError).cause;
    expect(TenantLimitError.isInstance(cause), String(cause)).to.equal(true);
    expect(cause).to.deep.include({ tenant: 'acme', limit: 'requestsPerMinute', max: 4, current: 4 });
    // Counted in Redis (RedisGovernance), not in a worker's memory.
    expect(await admin.get('kosong:gov:pace:acme:requests')).to.equal('4');
    // A tenant without limits is not held.
    for (let i = 0; i < 2; i++) {
      const free = await turns.submit({ tenant: 'beta', session: `beta-${i}`, input: PROMPT });
      expect((await free.result()).stopReason).to.equal('no_tool_calls');
    }
    // A tenant the workers were not given: its turn fails, naming it.
    const stranger = await turns.submit({ tenant: 'stranger', session: 'x', input: PROMPT });
    const unknown = await stranger.result().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(String((unknown as Error)?.message)).to.match(/stranger/);

    const usage = await runCli(['--redis', redis.url, '--json', 'usage', '--by', 'tenant'], ws.cwd);
    expect(usage.code, usage.stderr).to.equal(0);
    const rows = (JSON.parse(usage.stdout) as { rows: { tenant?: string; steps: number }[] }).rows;
    expect(rows.find((row) => row.tenant === 'acme')?.steps, 'acme: 3 steps, then 1 of the refused turn').to.equal(4);
    expect(rows.find((row) => row.tenant === 'beta')?.steps).to.equal(6);
  });

  it('refuses a config it cannot honour (exit 2, naming the problem), never starts unlimited', async () => {
    for (const [content, message] of [
      [{ tenants: { acme: { limits: { requestsPerMinute: -1 } } } }, /requestsPerMinute must be a positive integer/],
      [{ tenants: { acme: { limits: { requestPerMinute: 5 } } } }, /unknown limit "requestPerMinute"/],
      [{ tenants: { acme: { limts: {} } } }, /tenant "acme" must be \{ "limits"/],
      [{ tenant: {} }, /unknown key "tenant"/],
      ['{ not json', /not JSON/],
    ] as const) {
      const refused = await runCli(['--redis', redis.url, 'worker', '--config', config(content)], ws.cwd, { timeoutMs: 30_000 });
      expect(refused.code, refused.stderr).to.equal(2);
      expect(refused.stderr).to.match(message);
    }
    const missing = await runCli(['--redis', redis.url, 'worker', '--config', join(ws.base, 'missing.json')], ws.cwd);
    expect(missing.code).to.equal(2);
    expect(missing.stderr).to.match(/--config .*missing\.json/);
  });
});
