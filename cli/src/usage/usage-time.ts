import { InvalidArgumentError } from 'commander';
import { DAY_MS } from './usage-line.js';

const HOUR_MS = 3_600_000;
/** The furthest back (or ahead) a time may be: far beyond any ledger, well within a `Date`. */
const MAX_AGE_DAYS = 100_000;

/**
 * A time of `kosong usage --since` / `--until`, in milliseconds since the epoch:
 *
 * - `7d`, `24h`: that long before `now`;
 * - `2026-11-01`: a UTC day — its start for `--since`, its end (the next midnight) for `--until`,
 *   so that `--until 2026-11-30` includes November 30;
 * - `2026-11-01T12:00:00Z` (ISO 8601 with a time): that instant.
 *
 * The ledger counts whole UTC days: the day holding the time is included (see `UsageQuery`).
 *
 * @throws InvalidArgumentError (commander's usage error) for anything else.
 */
export function parseUsageTime(value: string, edge: 'since' | 'until', now = Date.now()): number {
  const text = value.trim();
  const relative = /^(\d{1,6})([dh])$/.exec(text);
  if (relative) {
    const count = Number(relative[1]);
    if (relative[2] === 'd' ? count > MAX_AGE_DAYS : count > MAX_AGE_DAYS * 24) throw new InvalidArgumentError(`${value} is too long ago`);
    return now - count * (relative[2] === 'd' ? DAY_MS : HOUR_MS);
  }
  const day = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (day) {
    const [year, month, date] = [Number(day[1]), Number(day[2]), Number(day[3])];
    const start = Date.UTC(year, month - 1, date);
    const check = new Date(start);
    if (check.getUTCFullYear() !== year || check.getUTCMonth() !== month - 1 || check.getUTCDate() !== date) {
      throw new InvalidArgumentError(`${value} is not a day of the calendar`);
    }
    return edge === 'since' ? start : start + DAY_MS;
  }
  if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/.test(text)) {
    const instant = Date.parse(text);
    if (Number.isFinite(instant)) return instant;
  }
  throw new InvalidArgumentError('expected a duration back from now (7d, 24h), a UTC day (2026-11-01) or an ISO time with its zone (2026-11-01T12:00:00Z)');
}
