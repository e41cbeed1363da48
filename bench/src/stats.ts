/** The median of a non-empty list (the mean of the middle two for an even length). */
export function median(values: readonly number[]): number {
  return quantile(values, 0.5);
}

/**
 * The `q`-quantile (0 ≤ q ≤ 1) of a non-empty list, interpolated linearly between the closest ranks
 * (so `quantile(v, 0.5)` is the median and `quantile(v, 0.25)` the first quartile).
 */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) throw new Error('quantile of an empty list');
  if (!(q >= 0 && q <= 1)) throw new Error(`quantile must be within [0, 1], got ${q}`);
  const sorted = [...values].sort((a, b) => a - b);
  const rank = q * (sorted.length - 1);
  const low = Math.floor(rank);
  const high = Math.ceil(rank);
  return sorted[low]! + (sorted[high]! - sorted[low]!) * (rank - low);
}

/** A distribution summarised: its median, quartiles and extremes. */
export interface Spread {
  readonly median: number;
  readonly p25: number;
  readonly p75: number;
  readonly min: number;
  readonly max: number;
}

/** The {@link Spread} of a non-empty list. */
export function spread(values: readonly number[]): Spread {
  return {
    median: median(values),
    p25: quantile(values, 0.25),
    p75: quantile(values, 0.75),
    min: Math.min(...values),
    max: Math.max(...values),
  };
}

/**
 * The ratio of each round: `values[i] / baselines[i]`. Both lists hold one measurement per round,
 * in round order, so drift of the machine between rounds cancels out of each ratio.
 *
 * @throws when the lists differ in length or a baseline is not positive.
 */
export function pairedRatios(values: readonly number[], baselines: readonly number[]): number[] {
  if (values.length !== baselines.length) throw new Error(`paired ratios of ${values.length} values and ${baselines.length} baselines`);
  return values.map((value, i) => {
    const baseline = baselines[i]!;
    if (!(baseline > 0)) throw new Error(`paired ratio against a baseline of ${baseline} (round ${i + 1})`);
    return value / baseline;
  });
}

/** Formats a number with a fixed number of decimals. */
export function fixed(value: number, decimals: number): string {
  return value.toFixed(decimals);
}
