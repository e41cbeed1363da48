import type { UsageGroupKey, UsageRow } from '@kosong/core/kernel';

/** A cost for people: `unknown` when a step of the row has no price (never `$0`), with the known part when there is one. */
export function formatCost(row: UsageRow): string {
  if (row.costUsd !== undefined) return dollars(row.costUsd);
  return row.knownCostUsd > 0 ? `unknown (≥ ${dollars(row.knownCostUsd)})` : 'unknown';
}

function dollars(usd: number): string {
  return `$${usd.toFixed(usd !== 0 && usd < 1 ? 6 : 2)}`;
}

/** The title of a group's column. */
const GROUP_TITLE: Readonly<Record<UsageGroupKey, string>> = { model: 'model', provider: 'provider', tenant: 'tenant', day: 'day (UTC)' };

/**
 * The rows as a table: a column per group key, then the steps, the token counts (uncached input,
 * output — reasoning included, as providers count it —, cache reads, cache writes) and the cost; a
 * `total` line under several rows. Numbers are right-aligned.
 */
export function usageTable(rows: readonly UsageRow[], groupBy: readonly UsageGroupKey[], total: UsageRow): string {
  const header = [...groupBy.map((key) => GROUP_TITLE[key]), 'steps', 'input', 'output', 'cache read', 'cache write', 'cost (USD)'];
  const line = (labels: readonly string[], row: UsageRow): string[] => [
    ...labels,
    ...[row.steps, row.usage.inputOther, row.usage.output, row.usage.inputCacheRead, row.usage.inputCacheCreation].map((n) => n.toLocaleString('en')),
    formatCost(row),
  ];
  const body = rows.map((row) => line(groupBy.map((key) => (key === 'tenant' ? (row.tenant ?? '(none)') : (row[key] ?? ''))), row));
  if (rows.length > 1) body.push(line(groupBy.map((_, i) => (i === 0 ? 'total' : '')), total));
  const table = [header, ...body];
  const widths = header.map((_, column) => Math.max(...table.map((cells) => cells[column]!.length)));
  const labels = groupBy.length;
  return table
    .map((cells) => cells.map((cell, column) => (column < labels ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join('  ').trimEnd())
    .join('\n');
}
