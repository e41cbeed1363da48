/**
 * `--timeout` (a turn's time budget) and `--tool-timeout` (each tool call's): how they are written
 * (loaded by the command line itself: nothing of the kernel here).
 *
 * @module
 */
import type { TimeoutBudgets } from '@kosong/core';
import { InvalidArgumentError } from 'commander';

/** The longest budget the runtime takes (a timer's limit, about 24.8 days). */
const MAX_MS = 2 ** 31 - 1;
const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

/**
 * A duration flag: milliseconds (`500`, `500ms`) or a number with a unit (`30s`, `1.5m`, `1h`),
 * at least 1 ms and at most 2³¹ − 1 ms.
 *
 * @throws InvalidArgumentError (commander's usage error, exit 2) for anything else.
 */
export function parseDuration(value: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(value.trim());
  const ms = match ? Math.round(Number(match[1]) * UNIT_MS[match[2] ?? 'ms']!) : Number.NaN;
  if (!(ms >= 1 && ms <= MAX_MS)) throw new InvalidArgumentError('expected a duration: milliseconds (500) or with a unit (30s, 2m, 1h), from 1 ms to 24 days');
  return ms;
}

/** The flags as the agent's budgets: `--timeout` → `turnMs`, `--tool-timeout` → `toolCallMs` (`undefined`: neither given). */
export function timeoutBudgets(options: { readonly timeout?: number | undefined; readonly toolTimeout?: number | undefined }): TimeoutBudgets | undefined {
  if (options.timeout === undefined && options.toolTimeout === undefined) return undefined;
  return {
    ...(options.timeout === undefined ? {} : { turnMs: options.timeout }),
    ...(options.toolTimeout === undefined ? {} : { toolCallMs: options.toolTimeout }),
  };
}

/** A duration for people: `500 ms`, `30 s`, `2 min`, `1.5 h`. */
export function formatDuration(ms: number): string {
  if (ms < 1_000) return `${ms} ms`;
  if (ms < 60_000) return `${+(ms / 1_000).toFixed(3)} s`;
  if (ms < 3_600_000) return `${+(ms / 60_000).toFixed(3)} min`;
  return `${+(ms / 3_600_000).toFixed(3)} h`;
}
