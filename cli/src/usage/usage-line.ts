/**
 * One line of the CLI's usage file: a step's {@link UsageRecord} as JSON.
 *
 * ```json
 * {"at":"2026-12-02T07:30:00.000Z","tenant":null,"provider":"openai","model":"gpt-4o","usage":{"inputOther":412,"output":58,"inputCacheRead":0,"inputCacheCreation":0},"costUsd":0.00161}
 * ```
 *
 * `tenant` and `costUsd` are `null` when there is none (a step of no tenant; a model without a price,
 * whose cost is unknown — never written as 0).
 *
 * @module
 */
import type { UsageRecord } from '@kosong/core/kernel';

/** Milliseconds per day. */
export const DAY_MS = 86_400_000;

const USAGE_FIELDS = ['inputOther', 'output', 'inputCacheRead', 'inputCacheCreation'] as const;

/** The line of a record, with its newline. */
export function usageLine(record: UsageRecord): string {
  const usage = Object.fromEntries(USAGE_FIELDS.map((field) => [field, record.usage[field]]));
  return `${JSON.stringify({
    at: new Date(record.at).toISOString(),
    tenant: record.tenant ?? null,
    provider: record.provider,
    model: record.model,
    usage,
    costUsd: record.costUsd ?? null,
  })}\n`;
}

/** The record of a line (without its newline); `undefined` when the line is not one. */
export function parseUsageLine(line: string): UsageRecord | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const { at, tenant, provider, model, usage, costUsd } = value as Record<string, unknown>;
  const time = typeof at === 'string' ? Date.parse(at) : Number.NaN;
  if (!Number.isFinite(time)) return undefined;
  if (!(tenant === null || typeof tenant === 'string') || typeof provider !== 'string' || typeof model !== 'string') return undefined;
  if (!(costUsd === null || (typeof costUsd === 'number' && Number.isFinite(costUsd) && costUsd >= 0))) return undefined;
  if (typeof usage !== 'object' || usage === null) return undefined;
  const counts = usage as Record<string, unknown>;
  for (const field of USAGE_FIELDS) {
    const count = counts[field];
    if (typeof count !== 'number' || !Number.isSafeInteger(count) || count < 0) return undefined;
  }
  return Object.freeze({
    tenant: tenant ?? undefined,
    provider,
    model,
    usage: Object.freeze({
      inputOther: counts.inputOther as number,
      output: counts.output as number,
      inputCacheRead: counts.inputCacheRead as number,
      inputCacheCreation: counts.inputCacheCreation as number,
    }),
    costUsd: costUsd ?? undefined,
    at: time,
  });
}
