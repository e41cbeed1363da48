/**
 * What a suite's rounds add up to: per variant, the spread of its process medians, its ratio to the
 * variant it is compared with (the ratio of medians and the median of the per-round paired ratios),
 * its CPU and GC time, its extra metrics; and the verdict of each target. The report and the charts
 * are both drawn from this.
 *
 * @module
 */
import type { ChildReport, Suite, VariantEntry } from './harness.js';
import { median, pairedRatios, spread, type Spread } from './stats.js';

/** Every child report of one suite, by variant, in round order. */
export type SuiteResults = ReadonlyMap<string, readonly ChildReport[]>;

/** One variant of a summarised suite. */
export interface VariantSummary {
  readonly entry: VariantEntry;
  /** The variant it is compared with (`undefined` for the suite's baseline itself). */
  readonly baseline: string | undefined;
  /** Wall time: the spread of the per-process medians, in ms. */
  readonly ms: Spread;
  /** The per-process medians themselves, in round order. */
  readonly roundMs: readonly number[];
  /** CPU ms until idle: median of the per-process medians. */
  readonly cpuMs: number;
  /** GC ms per run: median of the per-process medians. */
  readonly gcMs: number;
  readonly maxRssMb: number;
  /** Median ms / the baseline's median ms. */
  readonly ratioOfMedians: number | undefined;
  /** CPU ms / the baseline's CPU ms. */
  readonly cpuRatio: number | undefined;
  /** The per-round ratios to the baseline (same round, both fresh processes), summarised. */
  readonly paired: Spread | undefined;
  /** The per-round paired ratios themselves, in round order. */
  readonly pairedByRound: readonly number[] | undefined;
  /** Median of each extra metric across processes. */
  readonly metrics: Readonly<Record<string, number>>;
  readonly processes: number;
}

/** A target and whether it was met. */
export interface TargetVerdict {
  /** e.g. `kosong ≤ 1.3× bare (wall, median paired ratio)`. */
  readonly label: string;
  readonly value: number;
  readonly limit: number;
  readonly met: boolean;
  /** How to print the value (`1.23×`, `2.40 KB`). */
  readonly formatted: string;
}

/** A suite's results, summarised. */
export interface SuiteSummary {
  readonly suite: Suite;
  readonly rounds: number;
  /**
   * Whether the rounds stopped because the medians were stable (`false`: the round limit was reached;
   * `undefined`: a fixed number of rounds was asked for).
   */
  readonly stable: boolean | undefined;
  readonly variants: readonly VariantSummary[];
  readonly targets: readonly TargetVerdict[];
  /** Extra head-to-head comparisons: a / b, wall (median paired ratio) and CPU. */
  readonly comparisons: readonly { readonly a: string; readonly b: string; readonly wall: number; readonly cpu: number }[];
}

/** The variant `variant` is compared with in `suite`, or `undefined` when it is the suite's baseline. */
export function baselineOf(suite: Suite, variant: string): string | undefined {
  const entry = suite.variants.find((v) => v.name === variant);
  const baseline = entry?.baseline ?? suite.baseline;
  return baseline === variant ? undefined : baseline;
}

/** Summarises the rounds of one suite. */
export function summarise(suite: Suite, results: SuiteResults, rounds: number, stable: boolean | undefined): SuiteSummary {
  const reportsOf = (variant: string): readonly ChildReport[] => {
    const reports = results.get(variant);
    if (!reports || reports.length === 0) throw new Error(`${suite.name}: no results for variant "${variant}"`);
    return reports;
  };
  const msOf = (variant: string) => reportsOf(variant).map((r) => r.medianMs);
  const cpuOf = (variant: string) => median(reportsOf(variant).map((r) => r.medianCpuMs));
  const paired = (a: string, b: string) => pairedRatios(msOf(a), msOf(b));

  const variants = suite.variants.map((entry): VariantSummary => {
    const reports = reportsOf(entry.name);
    const baseline = baselineOf(suite, entry.name);
    const ms = spread(msOf(entry.name));
    const byRound = baseline === undefined ? undefined : paired(entry.name, baseline);
    const metricKeys = suite.metrics?.map((m) => m.key) ?? [];
    return {
      entry,
      baseline,
      ms,
      roundMs: msOf(entry.name),
      cpuMs: cpuOf(entry.name),
      gcMs: median(reports.map((r) => r.medianGcMs ?? 0)),
      maxRssMb: median(reports.map((r) => r.maxRssMb)),
      ratioOfMedians: baseline === undefined ? undefined : ms.median / median(msOf(baseline)),
      cpuRatio: baseline === undefined ? undefined : cpuOf(entry.name) / cpuOf(baseline),
      paired: byRound && spread(byRound),
      pairedByRound: byRound,
      metrics: Object.fromEntries(
        metricKeys.flatMap((key) => {
          const values = reports.map((r) => r.metrics?.[key]).filter((v): v is number => typeof v === 'number');
          return values.length > 0 ? [[key, median(values)]] : [];
        }),
      ),
      processes: reports.length,
    };
  });

  const targets = (suite.targets ?? []).map((target): TargetVerdict => {
    if ('maxRatio' in target) {
      const value = median(paired(target.variant, target.baseline));
      return {
        label: `${target.variant} ≤ ${target.maxRatio}× ${target.baseline} (wall, median paired ratio)`,
        value,
        limit: target.maxRatio,
        met: value <= target.maxRatio,
        formatted: `${value.toFixed(2)}×`,
      };
    }
    const spec = suite.metrics?.find((m) => m.key === target.metric);
    const value = variants.find((v) => v.entry.name === target.variant)?.metrics[target.metric];
    if (value === undefined || spec === undefined) throw new Error(`${suite.name}: no metric "${target.metric}" for "${target.variant}"`);
    return {
      label: `${target.variant}: ${spec.label} ≤ ${target.max}`,
      value,
      limit: target.max,
      met: value <= target.max,
      formatted: value.toFixed(spec.decimals),
    };
  });

  const comparisons = (suite.comparisons ?? []).map(([a, b]) => ({ a, b, wall: median(paired(a, b)), cpu: cpuOf(a) / cpuOf(b) }));
  return { suite, rounds, stable, variants, targets, comparisons };
}
