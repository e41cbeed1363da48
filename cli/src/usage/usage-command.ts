/**
 * `kosong usage`: the tokens and cost of the steps the CLI ran, from its usage file (or, with
 * `--redis`, a Redis usage ledger).
 *
 * @module
 */
import type { UsageGroupKey, UsageLedger, UsageRow } from '@kosong/core/kernel';
import { fail } from '../setup-failure.js';
import { loadRedisSupport } from '../redis-support.js';
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

/** Runs `kosong usage`: prints the table (or, with `--json`, one JSON object); warnings about the file go to stderr. */
export async function runUsage(options: UsageCommandOptions): Promise<void> {
  if (options.since !== undefined && options.until !== undefined && options.until <= options.since) {
    fail('usage: --until must be later than --since');
  }
  const { ledger, source, warnings, close } = options.redis === undefined ? await fileLedger() : await redisLedger(options.redis);
  const range = { ...(options.since === undefined ? {} : { since: options.since }), ...(options.until === undefined ? {} : { until: options.until }) };
  let rows: readonly UsageRow[];
  let total: UsageRow;
  try {
    [rows, [total]] = (await Promise.all([ledger.query({ ...range, groupBy: options.groupBy }), ledger.query(range)])) as [readonly UsageRow[], [UsageRow]];
  } catch (error) {
    await close();
    fail(`usage: cannot read the usage ledger at ${source}: ${(error as Error).message}`);
  }
  await close();
  if (options.json) {
    process.stdout.write(`${JSON.stringify({ source, ...timeRange(options), groupBy: options.groupBy, rows: rows.map(rowJson), total: rowJson(total), warnings })}\n`);
    return;
  }
  if (rows.length === 0) {
    process.stdout.write(`no usage recorded${options.since === undefined && options.until === undefined ? '' : ' in that time'} (${source})\n`);
    return;
  }
  process.stdout.write(`${usageTable(rows, options.groupBy, total)}\n`);
}

/** A ledger to query, where it is (for messages), what reading it warned of, and how to let it go. */
interface OpenLedger {
  readonly ledger: UsageLedger;
  readonly source: string;
  readonly warnings: readonly string[];
  readonly close: () => Promise<void>;
}

/** The usage file, read once (its warnings said on stderr). */
async function fileLedger(): Promise<OpenLedger> {
  let path: string;
  try {
    path = usageFilePath();
  } catch (error) {
    fail((error as Error).message);
  }
  try {
    const { ledger, warnings } = await loadUsageFile(path);
    for (const warning of warnings) process.stderr.write(`kosong: warning: ${warning}\n`);
    return { ledger, source: path, warnings, close: () => Promise.resolve() };
  } catch (error) {
    fail(`usage: cannot read ${path}: ${(error as Error).message}`);
  }
}

/** The Redis usage ledger of `@kosong/bullmq` (a setup error, exit 2, when it is not installed). */
async function redisLedger(url: string): Promise<OpenLedger> {
  const { redisUsageLedger } = await loadRedisSupport(() => import('./redis-usage.js'));
  let ledger: ReturnType<typeof redisUsageLedger>;
  try {
    ledger = redisUsageLedger(url);
  } catch (error) {
    fail(`usage --redis: ${(error as Error).message}`);
  }
  return { ledger, source: withoutCredentials(url), warnings: [], close: () => ledger.close() };
}

/** A Redis URL without its user and password, for output. */
function withoutCredentials(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.username === '' && parsed.password === '') return url;
    parsed.username = '';
    parsed.password = '';
    return parsed.toString();
  } catch {
    return '(a Redis URL)';
  }
}

function timeRange(options: UsageCommandOptions): { since: string | null; until: string | null } {
  const iso = (ms: number | undefined): string | null => (ms === undefined ? null : new Date(ms).toISOString());
  return { since: iso(options.since), until: iso(options.until) };
}

/** A row as JSON: an unknown cost is `null`, never 0. */
function rowJson(row: UsageRow): object {
  return { ...row, costUsd: row.costUsd ?? null, ...('tenant' in row ? { tenant: row.tenant ?? null } : {}) };
}
