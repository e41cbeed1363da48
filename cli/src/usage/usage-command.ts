/**
 * `kosong usage`: the tokens and cost of the steps the CLI ran, from its usage file (or, with
 * `--redis`, a Redis usage ledger).
 *
 * @module
 */
import type { UsageGroupKey, UsageLedger, UsageRow } from '@kosong/core/kernel';
import { fail } from '../setup-failure.js';
import { loadUsageFile } from './usage-file-ledger.js';
import { usageFilePath } from './usage-file-path.js';
import { usageTable } from './usage-table.js';

/** What `kosong usage` was asked for. */
export interface UsageCommandOptions {
  /** From this time on (ms since the epoch), in whole UTC days. */
  readonly since?: number | undefined;
  /** Before this time (ms since the epoch), in whole UTC days. */
  readonly until?: number | undefined;
  /** The keys of the rows (`--by`). */
  readonly groupBy: readonly UsageGroupKey[];
  readonly json: boolean;
  /** `--redis <url>`: a Redis usage ledger instead of the file. */
  readonly redis?: string | undefined;
}

/** The message of `--redis` while `@kosong/bullmq` has no Redis usage ledger. */
export const REDIS_USAGE_NOT_AVAILABLE = 'usage --redis: not available yet: @kosong/bullmq has no Redis usage ledger in this version (kosong usage reads the local usage file without --redis)';

/** Runs `kosong usage`: prints the table (or, with `--json`, one JSON object); warnings about the file go to stderr. */
export async function runUsage(options: UsageCommandOptions): Promise<void> {
  if (options.since !== undefined && options.until !== undefined && options.until <= options.since) {
    fail('usage: --until must be later than --since');
  }
  if (options.redis !== undefined) fail(REDIS_USAGE_NOT_AVAILABLE);
  let path: string;
  try {
    path = usageFilePath();
  } catch (error) {
    fail((error as Error).message);
  }
  let ledger: UsageLedger;
  let warnings: readonly string[];
  try {
    ({ ledger, warnings } = await loadUsageFile(path));
  } catch (error) {
    fail(`usage: cannot read ${path}: ${(error as Error).message}`);
  }
  for (const warning of warnings) process.stderr.write(`kosong: warning: ${warning}\n`);
  const range = { ...(options.since === undefined ? {} : { since: options.since }), ...(options.until === undefined ? {} : { until: options.until }) };
  const [rows, [total]] = await Promise.all([ledger.query({ ...range, groupBy: options.groupBy }), ledger.query(range)]);
  if (options.json) {
    process.stdout.write(`${JSON.stringify({ source: path, ...timeRange(options), groupBy: options.groupBy, rows: rows.map(rowJson), total: rowJson(total!), warnings })}\n`);
    return;
  }
  if (rows.length === 0) {
    process.stdout.write(`no usage recorded${options.since === undefined && options.until === undefined ? '' : ' in that time'} (${path})\n`);
    return;
  }
  process.stdout.write(`${usageTable(rows, options.groupBy, total!)}\n`);
}

function timeRange(options: UsageCommandOptions): { since: string | null; until: string | null } {
  const iso = (ms: number | undefined): string | null => (ms === undefined ? null : new Date(ms).toISOString());
  return { since: iso(options.since), until: iso(options.until) };
}

/** A row as JSON: an unknown cost is `null`, never 0. */
function rowJson(row: UsageRow): object {
  return { ...row, costUsd: row.costUsd ?? null, ...('tenant' in row ? { tenant: row.tenant ?? null } : {}) };
}
