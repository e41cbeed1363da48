/**
 * How many rounds a suite runs. A round runs every variant once, each in a fresh process. With a fixed
 * count (`--rounds=N`) that many run; otherwise rounds go on until the medians are stable, within
 * bounds: the median of every variant's paired ratios (see {@link trackedSeries}) moved by at most
 * `tolerance` over the last `window` rounds.
 *
 * @module
 */
import { median, pairedRatios } from './stats.js';

/** When a suite stops running rounds. */
export interface RoundPolicy {
  /** Rounds always run. */
  readonly min: number;
  /** Rounds never exceeded, stable or not. */
  readonly max: number;
  /** Largest relative move of a running median still counted as stable (0.02: 2 %). */
  readonly tolerance: number;
  /** How many of the latest running medians must agree (the current one included). */
  readonly window: number;
}

/** The default: at least 7 rounds, then until the medians hold within 2 % over 3 rounds, at most 15. */
export const DEFAULT_ROUND_POLICY: RoundPolicy = { min: 7, max: 15, tolerance: 0.02, window: 3 };

/** A fixed number of rounds. */
export function fixedRounds(rounds: number): RoundPolicy {
  return { min: rounds, max: rounds, tolerance: Infinity, window: 1 };
}

/**
 * The series whose running medians must settle: the per-round paired ratio of every variant that is
 * compared with another (`baselineOf` gives the one it is compared with, or `undefined` for a
 * baseline). A suite without comparisons tracks each variant's wall time instead.
 */
export function trackedSeries(
  msByVariant: ReadonlyMap<string, readonly number[]>,
  baselineOf: (variant: string) => string | undefined,
): number[][] {
  const series: number[][] = [];
  for (const [variant, ms] of msByVariant) {
    const baseline = baselineOf(variant);
    const base = baseline === undefined ? undefined : msByVariant.get(baseline);
    if (base !== undefined && baseline !== variant) series.push(pairedRatios(ms, base));
  }
  return series.length > 0 ? series : [...msByVariant.values()].map((ms) => [...ms]);
}

/** The largest relative move of any series' running median over the policy's window (0 when too short to tell). */
export function largestRecentMove(series: readonly (readonly number[])[], window: number): number {
  let largest = 0;
  for (const values of series) {
    if (values.length < window) return Infinity;
    const current = median(values);
    for (let back = 1; back < window; back++) {
      const earlier = median(values.slice(0, values.length - back));
      largest = Math.max(largest, Math.abs(current - earlier) / Math.abs(current));
    }
  }
  return largest;
}

/** Whether another round should run after `rounds` rounds whose tracked series are `series`. */
export function needsAnotherRound(rounds: number, series: readonly (readonly number[])[], policy: RoundPolicy): boolean {
  if (rounds < policy.min) return true;
  if (rounds >= policy.max) return false;
  return largestRecentMove(series, policy.window) > policy.tolerance;
}
