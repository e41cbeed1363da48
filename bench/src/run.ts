/**
 * The orchestrator of `npm run bench`. For each suite, runs every variant in a fresh child process,
 * alternating the variants (a, b, c, a, b, c, …) round after round until the medians are stable (or
 * for a fixed number of rounds); each child does a warm-up and M timed runs and reports its median.
 * Prints a markdown report (spreads, paired ratios per round, targets) and writes it with an SVG
 * chart per suite to the git-ignored `bench/.bench-results/node<major>/`, or with `--record` to
 * `bench/results/node<major>/`. Before a suite with a variant from `bench/peers` runs, the peers are
 * installed and compiled.
 *
 * Flags (or environment variables): `--rounds=N` (`BENCH_ROUNDS`: exactly N rounds), `--min-rounds`,
 * `--max-rounds` (`BENCH_MIN_ROUNDS`, `BENCH_MAX_ROUNDS`: the bounds of "until stable", default 7 and
 * 15 unless a suite sets its own), `--runs=M` (`BENCH_RUNS`, default 3), `--warmup=W` (`BENCH_WARMUP`,
 * default 1), `--suite=a,b` (`BENCH_SUITES`, default all), `--variants=x,y` (`BENCH_VARIANTS`: only these
 * variants and their baselines, for a quick comparison), `--record` (`BENCH_RECORD=1`).
 *
 * @module
 */
import { spawn } from 'node:child_process';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { costChart } from './charts/cost-chart.js';
import { ratioChart } from './charts/ratio-chart.js';
import { positiveInt } from './cli.js';
import type { ChildReport, Suite, VariantEntry } from './harness.js';
import { preparePeers } from './peers.js';
import { renderHeader, renderSuite } from './report.js';
import { writeResults } from './results-file.js';
import { DEFAULT_ROUND_POLICY, fixedRounds, largestRecentMove, needsAnotherRound, trackedSeries, type RoundPolicy } from './rounds.js';
import { runCounts } from './run-counts.js';
import { fixed } from './stats.js';
import { baselineOf, summarise, type SuiteSummary } from './summary.js';
import { findSuite, suites as allSuites } from './suites/index.js';

/** How long one child may take before it is killed and the run fails. */
const CHILD_TIMEOUT_MS = 300_000;
const CHILD_SCRIPT = fileURLToPath(new URL('./child.js', import.meta.url));

interface Config {
  /** Exactly this many rounds, when set. */
  readonly rounds: number | undefined;
  readonly minRounds: number | undefined;
  readonly maxRounds: number | undefined;
  readonly runs: number;
  readonly warmup: number;
  readonly suites: readonly Suite[];
  /** Write the report and charts to the tracked `bench/results/node<major>/`. */
  readonly record: boolean;
}

function readConfig(): Config {
  const env = process.env;
  const { values } = parseArgs({
    options: {
      rounds: { type: 'string', default: env['BENCH_ROUNDS'] ?? '' },
      'min-rounds': { type: 'string', default: env['BENCH_MIN_ROUNDS'] ?? '' },
      'max-rounds': { type: 'string', default: env['BENCH_MAX_ROUNDS'] ?? '' },
      runs: { type: 'string', default: env['BENCH_RUNS'] ?? '3' },
      warmup: { type: 'string', default: env['BENCH_WARMUP'] ?? '1' },
      suite: { type: 'string', default: env['BENCH_SUITES'] ?? '' },
      variants: { type: 'string', default: env['BENCH_VARIANTS'] ?? '' },
      record: { type: 'boolean', default: env['BENCH_RECORD'] === '1' },
    },
  });
  const optional = (text: string, name: string) => (text === '' ? undefined : positiveInt(text, name));
  const names = values.suite.split(',').filter((name) => name !== '');
  const only = values.variants.split(',').filter((name) => name !== '');
  const suites = names.length > 0 ? names.map(findSuite) : allSuites;
  return {
    rounds: optional(values.rounds, 'rounds'),
    minRounds: optional(values['min-rounds'], 'min-rounds'),
    maxRounds: optional(values['max-rounds'], 'max-rounds'),
    runs: positiveInt(values.runs, 'runs'),
    warmup: positiveInt(values.warmup, 'warmup', 0),
    suites: only.length > 0 ? suites.map((suite) => onlyVariants(suite, only)) : suites,
    record: values.record,
  };
}

/**
 * The suite with only the variants named in `only` (and the variants they are compared with, and
 * theirs); a suite none of whose variants is named is kept whole.
 */
function onlyVariants(suite: Suite, only: readonly string[]): Suite {
  const named = suite.variants.filter((v) => only.includes(v.name));
  if (named.length === 0) return suite;
  // The named variants, their baselines, the baselines of those, and so on.
  const wanted = new Set<string>();
  const add = (name: string): void => {
    if (wanted.has(name)) return;
    wanted.add(name);
    const baseline = baselineOf(suite, name);
    if (baseline !== undefined) add(baseline);
  };
  for (const variant of named) add(variant.name);
  const variants = suite.variants.filter((v) => wanted.has(v.name));
  const targets = suite.targets?.filter((t) => wanted.has(t.variant) && (!('baseline' in t) || wanted.has(t.baseline)));
  const comparisons = suite.comparisons?.filter(([a, b]) => wanted.has(a) && wanted.has(b));
  return { ...suite, variants, ...(targets ? { targets } : {}), ...(comparisons ? { comparisons } : {}) };
}

/** The rounds policy of a suite under this configuration. */
function roundPolicy(suite: Suite, config: Config): RoundPolicy {
  if (config.rounds !== undefined) return fixedRounds(config.rounds);
  const min = config.minRounds ?? suite.rounds?.min ?? DEFAULT_ROUND_POLICY.min;
  const max = Math.max(min, config.maxRounds ?? suite.rounds?.max ?? DEFAULT_ROUND_POLICY.max);
  return { ...DEFAULT_ROUND_POLICY, min, max };
}

function describeRounds(config: Config): string {
  if (config.rounds !== undefined) return `fixed, ${config.rounds}`;
  const { min, max, tolerance, window } = DEFAULT_ROUND_POLICY;
  const bounds = `${config.minRounds ?? min}–${config.maxRounds ?? max}`;
  return `until every median paired ratio moved by ≤ ${tolerance * 100} % over the last ${window} rounds, within ${bounds} rounds (unless a suite sets its own bounds)`;
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

/** Runs rounds of a suite until its policy says stop; returns the summary. */
async function runSuite(suite: Suite, config: Config): Promise<SuiteSummary> {
  const started = performance.now();
  const policy = roundPolicy(suite, config);
  const results = new Map<string, ChildReport[]>(suite.variants.map((v) => [v.name, []]));
  const series = () => trackedSeries(new Map([...results].map(([name, reports]) => [name, reports.map((r) => r.medianMs)])), (v) => baselineOf(suite, v));
  let rounds = 0;
  while (needsAnotherRound(rounds, series(), policy)) {
    rounds++;
    const line: string[] = [];
    for (const variant of suite.variants) {
      const report = await runChild(suite.name, variant, config);
      results.get(variant.name)!.push(report);
      line.push(`${variant.name} ${fixed(report.medianMs, 1)} ms`);
    }
    process.stderr.write(`[${suite.name}] round ${rounds}/${policy.max}: ${line.join(', ')}\n`);
  }
  const move = largestRecentMove(series(), DEFAULT_ROUND_POLICY.window);
  const stable = config.rounds === undefined ? move <= policy.tolerance : undefined;
  process.stderr.write(
    `[${suite.name}] done in ${fixed((performance.now() - started) / 1000, 1)} s, ${rounds} rounds ` +
      `(${stable === undefined ? 'fixed' : stable ? 'stable' : 'not stable'}: medians moved by ${fixed(move * 100, 1)} % over the last ${DEFAULT_ROUND_POLICY.window})\n`,
  );
  return summarise(suite, results, rounds, stable);
}

/** The chart of a suite, with the run's Node version and date in its subtitle. */
function chartOf(summary: SuiteSummary, startedAt: Date): string {
  const subtitle = `node ${process.version}, ${startedAt.toISOString().slice(0, 10)}, ${summary.rounds} rounds`;
  return summary.suite.chart === 'cost-vs-work' ? costChart(summary, subtitle, summary.suite.workUnit ?? 'work') : ratioChart(summary, subtitle);
}

async function main(): Promise<void> {
  const config = readConfig();
  const startedAt = new Date();
  const started = performance.now();
  const loadAtStart = os.loadavg();
  if (config.suites.some((suite) => suite.variants.some((variant) => variant.fromPeers))) {
    await preparePeers((line) => process.stderr.write(`${line}\n`));
  }
  const sections: string[] = [];
  const charts = new Map<string, string>();
  for (const suite of config.suites) {
    const summary = await runSuite(suite, config);
    const chart = `${suite.name}.svg`;
    charts.set(chart, chartOf(summary, startedAt));
    sections.push(renderSuite(summary, (v) => runCounts(v.entry, config), chart));
  }
  const header = renderHeader({
    rounds: describeRounds(config),
    runs: config.runs,
    warmup: config.warmup,
    loadAtStart,
    loadAtEnd: os.loadavg(),
    startedAt,
    seconds: (performance.now() - started) / 1000,
  });
  const report = `${header}\n${sections.join('\n')}`;
  process.stdout.write(`\n${report}`);
  const file = await writeResults({ report, charts }, { record: config.record });
  process.stderr.write(`\nwritten to ${file} and ${charts.size} chart(s) next to it (${fixed((performance.now() - started) / 1000, 1)} s in all)\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
