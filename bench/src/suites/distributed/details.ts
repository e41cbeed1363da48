/**
 * The distributed numbers the harness's wall-time table does not give:
 * `node bench/lib/suites/distributed/details.js [--calls=N] [--aborts=N] [--turns=N]`.
 *
 * - per-call latency of a remote tool call vs the same call in process (p50, p99) and the overhead;
 * - abort latency: from `TurnHandle.cancel()` (and from a step's abort) to the remote tool's signal,
 *   across processes (wall clocks of one machine);
 * - commands sent to Redis per step of a queued turn (MONITOR), with the commands that make them up.
 *
 * Prints a markdown report. Starts its own redis-server and one worker process.
 *
 * @module
 */
import { parseArgs } from 'node:util';
import type { ToolCall } from '@kosong/core';
import { RemoteToolset, TurnQueue } from '@kosong/bullmq';
import { planInput } from '@kosong/bullmq/testing';
import { Redis } from 'ioredis';
import { positiveInt } from '../../cli.js';
import { benchToolset } from './echo-toolset.js';
import { startFleet } from './fleet.js';

const now = (): number => performance.timeOrigin + performance.now();
const percentile = (values: readonly number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
};
const ms = (value: number): string => value.toFixed(value < 1 ? 3 : 2);

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { calls: { type: 'string', default: '1000' }, aborts: { type: 'string', default: '30' }, turns: { type: 'string', default: '40' } } });
  const calls = positiveInt(values.calls, '--calls');
  const aborts = positiveInt(values.aborts, '--aborts');
  const turnCount = positiveInt(values.turns, '--turns');
  const fleet = await startFleet(1);
  const admin = new Redis(fleet.redis.url);
  const toolset = await RemoteToolset.connect({ connection: fleet.redis.url, name: 'bench', tenant: 'bench', prefix: fleet.prefix });
  const local = benchToolset();
  const signal = new AbortController().signal;
  const call = (id: string, name = 'echo'): ToolCall => ({ type: 'function', id, function: { name, arguments: '{"x":1}' } });

  // 1. per-call latency, alternating local and remote
  const localMs: number[] = [];
  const remoteMs: number[] = [];
  for (let i = 0; i < calls + 50; i++) {
    const c = call(`c${i}`);
    let start = performance.now();
    await local.handle(c, { signal, toolCall: c, stepId: 'latency', index: i });
    const l = performance.now() - start;
    start = performance.now();
    await toolset.handle(c, { signal, toolCall: c, stepId: 'latency', index: i });
    const r = performance.now() - start;
    if (i >= 50) {
      localMs.push(l);
      remoteMs.push(r);
    }
  }

  // 2. abort latency: a step's abort → the remote tool's signal
  const stepAbortMs: number[] = [];
  for (let i = 0; i < aborts; i++) {
    const controller = new AbortController();
    const c = call(`w${i}`, 'wait');
    const before = await admin.llen(`${fleet.prefix}:aborts`);
    const pending = toolset.handle(c, { signal: controller.signal, toolCall: c, stepId: 'abort', index: i });
    await waitFor(async () => (await admin.exists(`${fleet.prefix}:tools.bench.bench:abort.${i}:lock`)) === 1);
    const abortedAt = now();
    controller.abort(new Error('bench'));
    await pending;
    await waitFor(async () => (await admin.llen(`${fleet.prefix}:aborts`)) > before);
    stepAbortMs.push(Number(await admin.lindex(`${fleet.prefix}:aborts`, -1)) - abortedAt);
  }
  // … and TurnHandle.cancel() → the remote tool's signal (through the agent worker)
  const turns = new TurnQueue({ connection: fleet.redis.url, prefix: fleet.prefix });
  const cancelMs: number[] = [];
  for (let i = 0; i < aborts; i++) {
    const before = await admin.llen(`${fleet.prefix}:aborts`);
    await waitFor(async () => (await admin.keys(`${fleet.prefix}:tools.bench.bench:*:lock`)).length === 0); // the last one is done
    const turn = await turns.submit({ tenant: 'bench', session: `cancel${i}`, input: planInput({ label: `cancel${i}`, steps: [[{ tool: 'wait' }]] }) });
    await waitFor(async () => (await admin.keys(`${fleet.prefix}:tools.bench.bench:*:lock`)).length > 0);
    const cancelledAt = now();
    await turn.cancel('bench');
    await turn.result().catch(() => undefined);
    await waitFor(async () => (await admin.llen(`${fleet.prefix}:aborts`)) > before);
    cancelMs.push(Number(await admin.lindex(`${fleet.prefix}:aborts`, -1)) - cancelledAt);
  }

  // 3. commands per step: every command a client sends (MONITOR; those run inside Lua scripts are not counted)
  const monitor = await new Redis(fleet.redis.url).monitor();
  const sent = new Map<string, number>();
  let counting = false;
  monitor.on('monitor', (_time: string, args: string[], source: string) => {
    if (!counting || source === 'lua') return;
    const name = String(args[0]).toLowerCase();
    sent.set(name, (sent.get(name) ?? 0) + 1);
  });
  await new Promise((resolve) => setTimeout(resolve, 200));
  counting = true;
  for (let i = 0; i < turnCount; i++) {
    const turn = await turns.submit({ tenant: 'bench', session: `rt${i % 4}`, input: planInput({ label: `rt${i}`, steps: [[{ tool: 'echo' }]], parts: 5 }) });
    await turn.result();
  }
  counting = false;
  monitor.disconnect();
  const steps = turnCount * 2;
  const perStep = [...sent.values()].reduce((a, b) => a + b, 0) / steps;
  const byCommand = [...sent].map(([name, count]) => [name, count / steps] as const).sort((a, b) => b[1] - a[1]);

  const lines = [
    `## distributed: details (${new Date().toISOString().slice(0, 10)}, Node ${process.version}, 1 worker process, local redis-server)`,
    '',
    `### One tool call: remote vs in process (${calls} sequential calls each, alternated)`,
    '',
    '| | p50 ms | p99 ms |',
    '| --- | ---: | ---: |',
    `| in process | ${ms(percentile(localMs, 50))} | ${ms(percentile(localMs, 99))} |`,
    `| remote (RemoteToolset → ToolWorker) | ${ms(percentile(remoteMs, 50))} | ${ms(percentile(remoteMs, 99))} |`,
    `| overhead | ${ms(percentile(remoteMs, 50) - percentile(localMs, 50))} | ${ms(percentile(remoteMs, 99) - percentile(localMs, 99))} |`,
    '',
    `### Abort latency to the remote tool's signal (${aborts} each)`,
    '',
    '| from | p50 ms | p99 ms | max ms |',
    '| --- | ---: | ---: | ---: |',
    `| the step's abort (RemoteToolset) | ${ms(percentile(stepAbortMs, 50))} | ${ms(percentile(stepAbortMs, 99))} | ${ms(Math.max(...stepAbortMs))} |`,
    `| \`TurnHandle.cancel()\` (via the agent worker) | ${ms(percentile(cancelMs, 50))} | ${ms(percentile(cancelMs, 99))} | ${ms(Math.max(...cancelMs))} |`,
    '',
    `### Redis commands per step (${turnCount} turns × 2 steps, one remote call per turn, 5 streamed parts per step, sequential)`,
    '',
    `${perStep.toFixed(1)} commands sent by all clients per step (submitter, agent worker, tool worker; counted with MONITOR; a Lua script is one EVAL/EVALSHA, pipelined commands count one each). By command:`,
    '',
    '| command | per step |',
    '| --- | ---: |',
    ...byCommand.map(([name, count]) => `| ${name} | ${count.toFixed(2)} |`),
  ];
  process.stdout.write(lines.join('\n') + '\n');
  await turns.close();
  await toolset.close();
  admin.disconnect();
  await Promise.all(fleet.workers.map((w) => w.stop()));
  await fleet.redis.stop();
}

async function waitFor(condition: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
