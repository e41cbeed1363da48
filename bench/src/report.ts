/**
 * The markdown report of a bench run: a header (machine, Node, load, method), then one section per
 * suite with its table, comparisons, targets and a link to its chart.
 *
 * @module
 */
import os from 'node:os';
import { fixed } from './stats.js';
import type { SuiteSummary, VariantSummary } from './summary.js';

/** How the run was configured, for the header. */
export interface RunDescription {
  /** `fixed N` or `until stable (min–max, ±tol over window)`. */
  readonly rounds: string;
  readonly runs: number;
  readonly warmup: number;
  /** Load averages (1, 5, 15 min) when the run started and when it ended. */
  readonly loadAtStart: readonly number[];
  readonly loadAtEnd: readonly number[];
  readonly startedAt: Date;
  readonly seconds: number;
}

/** The header of the report. */
export function renderHeader(run: RunDescription): string {
  const cpus = os.cpus();
  const load = (values: readonly number[]) => values.map((v) => fixed(v, 2)).join(', ');
  return [
    '# Benchmark results',
    '',
    `- date: ${run.startedAt.toISOString()} (${fixed(run.seconds / 60, 1)} min in all)`,
    `- machine: ${cpus[0]?.model ?? 'unknown CPU'}, ${os.availableParallelism()} cores, ${os.platform()} ${os.release()}`,
    `- node ${process.version}`,
    `- load average (1, 5, 15 min): ${load(run.loadAtStart)} at the start, ${load(run.loadAtEnd)} at the end` +
      (Math.max(run.loadAtStart[0] ?? 0, run.loadAtEnd[0] ?? 0) >= 1.5 ? ' (**loaded machine: provisional numbers**)' : ''),
    `- rounds: ${run.rounds}; a round runs every variant once in a fresh process, variants alternated; per process ${run.warmup} warm-up + ${run.runs} timed runs unless a variant caps them (see the table)`,
    "- median ms: wall time until the variant's result resolved; the median across processes of each process's median run, with the quartiles (p25–p75) and extremes of those process medians",
    '- × (medians): ratio of those medians; **paired ×**: the median of the per-round ratios (a variant and its baseline ran in the same round), with their quartiles; targets use the paired ratio',
    '- CPU ms until idle: user + system time of all threads of the measuring process from the start of a run until it is idle again (catches work left running after the result resolved); coarse, ±5 ms',
    '- GC ms: time in garbage collection during a run (`v8.GCProfiler`), median',
    '',
  ].join('\n');
}

/** The section of one suite; `chart` is the chart's file name, relative to the report. */
export function renderSuite(summary: SuiteSummary, counts: (variant: VariantSummary) => { runs: number; warmup: number }, chart: string | undefined): string {
  const { suite } = summary;
  const inProcess = suite.inProcess !== false;
  const metrics = suite.metrics ?? [];
  const perVariantBaselines = suite.variants.some((v) => v.baseline !== undefined && v.baseline !== suite.baseline);
  const against = perVariantBaselines ? 'baseline' : suite.baseline;
  const header = [
    'Variant',
    'Median ms',
    'p25–p75 (min–max) ms',
    `× ${against} (medians)`,
    `paired × ${against} [p25–p75]`,
    ...(inProcess ? [`CPU ms until idle (× ${against})`, 'GC ms (% of wall)', 'Max RSS (MB)'] : []),
    ...metrics.map((m) => m.label),
    'Processes × (warm-up + timed)',
    'What runs',
  ];
  const rows = summary.variants.map((v) => {
    const { runs, warmup } = counts(v);
    const vs = v.baseline === undefined ? '' : perVariantBaselines ? ` ${v.baseline}` : '';
    const cells = [
      v.entry.name,
      `**${fixed(v.ms.median, 1)}**`,
      `${fixed(v.ms.p25, 1)}–${fixed(v.ms.p75, 1)} (${fixed(v.ms.min, 1)}–${fixed(v.ms.max, 1)})`,
      v.ratioOfMedians === undefined ? '1.00×' : `${fixed(v.ratioOfMedians, 2)}×${vs}`,
      v.paired === undefined ? '–' : `**${fixed(v.paired.median, 2)}×** [${fixed(v.paired.p25, 2)}–${fixed(v.paired.p75, 2)}]`,
      ...(inProcess
        ? [
            `${fixed(v.cpuMs, 0)} (${v.cpuRatio === undefined ? '1.00' : fixed(v.cpuRatio, 2)}×)`,
            `${fixed(v.gcMs, 1)} (${fixed((100 * v.gcMs) / v.ms.median, 0)} %)`,
            fixed(v.maxRssMb, 0),
          ]
        : []),
      ...metrics.map((m) => (v.metrics[m.key] === undefined ? '–' : fixed(v.metrics[m.key]!, m.decimals))),
      `${v.processes} × (${warmup} + ${runs})`,
      v.entry.description,
    ];
    return `| ${cells.join(' | ')} |`;
  });
  const lines = [
    `## ${suite.name}: ${suite.title}`,
    '',
    `Workload: ${suite.workload}.`,
    '',
    `Rounds: ${summary.rounds}${summary.stable === undefined ? ' (fixed)' : summary.stable ? ' (medians stable)' : ' (round limit reached before the medians were stable)'}.` +
      (chart ? ` Chart: [${chart}](${chart}).` : ''),
    '',
    `| ${header.join(' | ')} |`,
    `| ${header.map((_, i) => (i === 0 || i === header.length - 1 ? '---' : '---:')).join(' | ')} |`,
    ...rows,
    '',
  ];
  for (const c of summary.comparisons) {
    const speed = c.wall <= 1 ? `${fixed(1 / c.wall, 1)}× faster` : `${fixed(c.wall, 1)}× slower`;
    lines.push(`- ${c.a} / ${c.b}: **${fixed(c.wall, 4)}×** wall time, median paired ratio (${speed}), ${fixed(c.cpu, 4)}× CPU time until idle`);
  }
  for (const t of summary.targets) lines.push(`- target ${t.label}: ${t.formatted}, ${t.met ? 'met' : '**not met**'}`);
  return lines.join('\n') + '\n';
}
