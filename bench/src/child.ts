/**
 * Measures one variant in this (fresh) process: `node lib/child.js <suite> <variant> [--runs=M] [--warmup=W]`.
 * Prepares the variant (untimed), does W warm-up runs and M timed runs (verifying every output), then
 * prints one {@link ChildReport} as a JSON line on stdout. Exits non-zero on any failure.
 *
 * After each run the child waits until the process is idle, so work a variant leaves running after
 * its result resolved is counted in its CPU time and never bleeds into the next run. Run it with
 * `--expose-gc` to collect garbage before each timed run (the orchestrator does). The time spent in
 * garbage collection during each timed run (until idle) is measured with `v8.GCProfiler`.
 *
 * @module
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { GCProfiler } from 'node:v8';
import { positiveInt } from './cli.js';
import type { ChildReport } from './harness.js';
import { median } from './stats.js';
import { findSuite } from './suites/index.js';

/** Length of one idle probe, in ms. */
const IDLE_WINDOW_MS = 20;
/** A probe window that used less CPU than this counts as idle. */
const IDLE_CPU_MS = 2;

/** CPU time used since `since`, in ms. */
function cpuSince(since: NodeJS.CpuUsage): number {
  const { user, system } = process.cpuUsage(since);
  return (user + system) / 1000;
}

/**
 * Waits until a probe window passes with (almost) no CPU used and its timer fired on time.
 *
 * @returns the CPU time of that last, idle window (to be subtracted from a measurement).
 */
async function untilIdle(): Promise<number> {
  for (;;) {
    const cpu = process.cpuUsage();
    const start = performance.now();
    await sleep(IDLE_WINDOW_MS);
    const used = cpuSince(cpu);
    if (used < IDLE_CPU_MS && performance.now() - start < 2 * IDLE_WINDOW_MS) return used;
  }
}

/** The time of every collection a `GCProfiler` saw, in ms (its `cost` is in µs). */
function gcCostMs(profile: ReturnType<GCProfiler['stop']>): number {
  let micros = 0;
  for (const collection of profile?.statistics ?? []) micros += collection.cost;
  return micros / 1000;
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { runs: { type: 'string', default: '3' }, warmup: { type: 'string', default: '1' } },
  });
  const [suiteName, variantName] = positionals;
  if (suiteName === undefined || variantName === undefined) throw new Error('usage: child.js <suite> <variant> [--runs=M] [--warmup=W]');
  const runs = positiveInt(values.runs, '--runs');
  const warmup = positiveInt(values.warmup, '--warmup', 0);
  const suite = findSuite(suiteName);
  const entry = suite.variants.find((v) => v.name === variantName);
  if (!entry) throw new Error(`suite "${suite.name}" has no variant "${variantName}"`);

  const variant = await (await entry.load()).prepare();
  const gc = (globalThis as { gc?: () => void }).gc;
  for (let i = 0; i < warmup; i++) {
    variant.verify(await variant.run());
    await untilIdle();
  }
  const runsMs: number[] = [];
  const cpuMs: number[] = [];
  const gcMs: number[] = [];
  const measured = new Map<string, number[]>();
  for (let i = 0; i < runs; i++) {
    gc?.();
    await untilIdle();
    const profiler = new GCProfiler();
    profiler.start();
    const cpu = process.cpuUsage();
    const start = performance.now();
    const output = await variant.run();
    runsMs.push(performance.now() - start);
    const idleWindow = await untilIdle();
    cpuMs.push(cpuSince(cpu) - idleWindow);
    gcMs.push(gcCostMs(profiler.stop()));
    variant.verify(output);
    for (const [key, value] of Object.entries((await variant.measure?.(output)) ?? {})) {
      measured.set(key, [...(measured.get(key) ?? []), value]);
    }
  }
  const report: ChildReport = {
    suite: suite.name,
    variant: entry.name,
    runsMs,
    medianMs: median(runsMs),
    cpuMs,
    medianCpuMs: median(cpuMs),
    maxRssMb: process.resourceUsage().maxRSS / 1024,
    gcMs,
    medianGcMs: median(gcMs),
    metrics: Object.fromEntries([...measured].map(([key, values]) => [key, median(values)])),
  };
  process.stdout.write(JSON.stringify(report) + '\n');
}

// Exit once measured: a variant may leave servers or sockets open (e.g. a local HTTP server).
main().then(
  () => process.stdout.write('', () => process.exit(0)),
  (error: unknown) => {
    process.stderr.write(`bench child failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
