/**
 * How many warm-up and timed runs one process of a variant makes.
 *
 * @module
 */
import type { VariantEntry } from './harness.js';

/** The runs per process the orchestrator is set to (`--runs`, `--warmup`). */
export interface RunSetting {
  readonly runs: number;
  readonly warmup: number;
}

/**
 * The warm-up and timed runs per process of a variant: the configured ones, raised to the
 * variant's floors (`minRuns`), within its caps (`maxRuns`).
 */
export function runCounts(variant: Pick<VariantEntry, 'maxRuns' | 'minRuns'>, setting: RunSetting): RunSetting {
  return {
    runs: Math.min(Math.max(setting.runs, variant.minRuns?.timed ?? 0), variant.maxRuns?.timed ?? Infinity),
    warmup: Math.min(Math.max(setting.warmup, variant.minRuns?.warmup ?? 0), variant.maxRuns?.warmup ?? Infinity),
  };
}
