/**
 * The orchestrator of `npm run bench`. For each suite, runs every variant in a fresh child process,
 * alternating the variants (a, b, c, a, b, c, …) for N rounds; each child does a warm-up and M timed
 * runs and reports its median. Prints a markdown table of the medians across processes and writes it
 * to the git-ignored `bench/.bench-results/latest.md`, or with `--record` to `bench/results/latest.md`.
 * Before a suite with a variant from `bench/peers` runs, the peers are installed and compiled.
 *
 * Flags (or environment variables): `--rounds=N` (`BENCH_ROUNDS`, default 7), `--runs=M`
 * (`BENCH_RUNS`, default 3), `--warmup=W` (`BENCH_WARMUP`, default 1), `--suite=a,b` (`BENCH_SUITES`,
 * default all), `--record` (`BENCH_RECORD=1`).
 *
 * @module
 */
import { spawn } from 'node:child_process';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { positiveInt } from './cli.js';
import type { ChildReport, Suite, VariantEntry } from './harness.js';
import { preparePeers } from './peers.js';
import { writeResults } from './results-file.js';
import { fixed, median } from './stats.js';
import { findSuite, suites as allSuites } from './suites/index.js';

/** How long one child may take before it is killed and the run fails. */
const CHILD_TIMEOUT_MS = 120_000;
const CHILD_SCRIPT = fileURLToPath(new URL('./child.js', import.meta.url));

interface Config {
  readonly rounds: number;
  readonly runs: number;
  readonly warmup: number;
  readonly suites: readonly Suite[];
  /** Write the report to the tracked `bench/results/latest.md`. */
  readonly record: boolean;
}

function readConfig(): Config {
  const { values } = parseArgs({
    options: {
      rounds: { type: 'string', default: process.env['BENCH_ROUNDS'] ?? '7' },
      runs: { type: 'string', default: process.env['BENCH_RUNS'] ?? '3' },
      warmup: { type: 'string', default: process.env['BENCH_WARMUP'] ?? '1' },
      suite: { type: 'string', default: process.env['BENCH_SUITES'] ?? '' },
      record: { type: 'boolean', default: process.env['BENCH_RECORD'] === '1' },
    },
  });
  const names = values.suite.split(',').filter((name) => name !== '');
  return {
    rounds: positiveInt(values.rounds, 'rounds'),
    runs: positiveInt(values.runs, 'runs'),
    warmup: positiveInt(values.warmup, 'warmup', 0),
    suites: names.length > 0 ? names.map(findSuite) : allSuites,
    record: values.record,
  };
}

/** The warm-up and timed runs per process of a variant: the configured ones, within the variant's caps. */
function runCounts(variant: VariantEntry, config: Config): { readonly runs: number; readonly warmup: number } {
  return {
    runs: Math.min(config.runs, variant.maxRuns?.timed ?? Infinity),
    warmup: Math.min(config.warmup, variant.maxRuns?.warmup ?? Infinity),
  };
}

/** Runs one variant in a fresh process and returns its report; rejects if the child fails. */
function runChild(suite: string, variant: VariantEntry, config: Config): Promise<ChildReport> {
  const { runs, warmup } = runCounts(variant, config);
  const args = ['--expose-gc', CHILD_SCRIPT, suite, variant.name, `--runs=${runs}`, `--warmup=${warmup}`];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${suite}/${variant.name}: no result after ${CHILD_TIMEOUT_MS} ms`));
    }, CHILD_TIMEOUT_MS);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code !== 0) return reject(new Error(`${suite}/${variant.name}: child exited with ${signal ?? `code ${code}`}`));
      const line = stdout.trim().split('\n').at(-1) ?? '';
      try {
        resolve(JSON.parse(line) as ChildReport);
      } catch {
        reject(new Error(`${suite}/${variant.name}: unreadable child output: ${JSON.stringify(stdout.slice(0, 500))}`));
      }
    });
  });
}

/** Every child report of one suite, by variant, in round order. */
type SuiteResults = Map<string, ChildReport[]>;

async function runSuite(suite: Suite, config: Config): Promise<SuiteResults> {
  const started = performance.now();
  const results: SuiteResults = new Map(suite.variants.map((v) => [v.name, []]));
  for (let round = 1; round <= config.rounds; round++) {
    const line: string[] = [];
    for (const variant of suite.variants) {
      const report = await runChild(suite.name, variant, config);
      results.get(variant.name)!.push(report);
      line.push(`${variant.name} ${fixed(report.medianMs, 1)} ms`);
    }
    process.stderr.write(`[${suite.name}] round ${round}/${config.rounds}: ${line.join(', ')}\n`);
  }
  process.stderr.write(`[${suite.name}] done in ${fixed((performance.now() - started) / 1000, 1)} s\n`);
  return results;
}

/** The median, across processes, of the per-process medians of `metric`. */
function medianOf(results: SuiteResults, variant: string, metric: 'medianMs' | 'medianCpuMs' = 'medianMs'): number {
  const reports = results.get(variant);
  if (!reports || reports.length === 0) throw new Error(`no results for variant "${variant}"`);
  return median(reports.map((r) => r[metric]));
}

function renderSuite(suite: Suite, results: SuiteResults, config: Config): string {
  const base = medianOf(results, suite.baseline);
  const baseCpu = medianOf(results, suite.baseline, 'medianCpuMs');
  const rows = suite.variants.map((variant) => {
    const reports = results.get(variant.name)!;
    const medians = reports.map((r) => r.medianMs);
    const ms = medianOf(results, variant.name);
    const cpu = medianOf(results, variant.name, 'medianCpuMs');
    const { runs, warmup } = runCounts(variant, config);
    return (
      `| ${variant.name} | **${fixed(ms, 1)}** | ${fixed(Math.min(...medians), 1)}–${fixed(Math.max(...medians), 1)} | ` +
      `**${fixed(ms / base, 2)}×** | ${fixed(cpu, 0)} (${fixed(cpu / baseCpu, 2)}×) | ${fixed(median(reports.map((r) => r.maxRssMb)), 0)} | ` +
      `${reports.length} × (${warmup} + ${runs}) | ${variant.description} |`
    );
  });
  const lines = [
    `## ${suite.name}: ${suite.title}`,
    '',
    `Workload: ${suite.workload}.`,
    '',
    `| Variant | Median ms | Range of process medians (ms) | × ${suite.baseline} | CPU ms until idle (× ${suite.baseline}) | Max RSS (MB) | Processes × (warm-up + timed) | What runs |`,
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |',
    ...rows,
    '',
  ];
  for (const [a, b] of suite.comparisons ?? []) {
    const wall = medianOf(results, a) / medianOf(results, b);
    const cpu = medianOf(results, a, 'medianCpuMs') / medianOf(results, b, 'medianCpuMs');
    lines.push(`- ${a} / ${b}: **${fixed(wall, 4)}×** wall time (${fixed(1 / wall, 0)}× faster), ${fixed(cpu, 4)}× CPU time until idle`);
  }
  for (const target of suite.targets ?? []) {
    const ratio = medianOf(results, target.variant) / medianOf(results, target.baseline);
    const verdict = ratio <= target.maxRatio ? 'met' : '**not met**';
    lines.push(`- target ${target.variant} ≤ ${target.maxRatio}× ${target.baseline} (wall): ${fixed(ratio, 2)}×, ${verdict}`);
  }
  return lines.join('\n') + '\n';
}

function renderHeader(config: Config): string {
  const cpus = os.cpus();
  return [
    '# Benchmark results',
    '',
    `- date: ${new Date().toISOString()}`,
    `- machine: ${cpus[0]?.model ?? 'unknown CPU'}, ${os.availableParallelism()} cores, ${os.platform()} ${os.release()}`,
    `- node ${process.version}`,
    `- ${config.rounds} rounds of fresh processes, variants alternated; per process ${config.warmup} warm-up + ${config.runs} timed runs unless a variant caps them (see the table)`,
    '- median ms: wall time until the variant\'s result resolved; median across processes of each process\'s median run; ratios are ratios of those medians',
    '- CPU ms until idle: user + system time of all threads from the start of a run until the process is idle again (catches work left running after the result resolved); coarse, ±5 ms',
    '',
  ].join('\n');
}

async function main(): Promise<void> {
  const config = readConfig();
  const started = performance.now();
  if (config.suites.some((suite) => suite.variants.some((variant) => variant.fromPeers))) {
    await preparePeers((line) => process.stderr.write(`${line}\n`));
  }
  const sections: string[] = [];
  for (const suite of config.suites) sections.push(renderSuite(suite, await runSuite(suite, config), config));
  const report = `${renderHeader(config)}\n${sections.join('\n')}`;
  process.stdout.write(`\n${report}`);
  const file = await writeResults(report, { record: config.record });
  process.stderr.write(`\nwritten to ${file} (${fixed((performance.now() - started) / 1000, 1)} s in all)\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
