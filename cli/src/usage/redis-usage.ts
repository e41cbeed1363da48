/**
 * `kosong usage --redis`: the usage ledger the workers of a Redis share (`@kosong/bullmq`'s
 * `RedisUsageLedger`), loaded only for `--redis` (see `loadRedisSupport`).
 *
 * @module
 */
import { RedisUsageLedger } from '@kosong/bullmq';
import type { UsageLedger } from '@kosong/core/kernel';

/** How long `kosong usage --redis` waits for an unreachable Redis before it gives up. */
const RECONNECT_WINDOW_MS = 3_000;

/** The Redis usage ledger at `url` (key prefix `kosong`, the workers' default), to query and then close. */
export function redisUsageLedger(url: string): UsageLedger & { close(): Promise<void> } {
  return new RedisUsageLedger({ connection: url, reconnectWindowMs: RECONNECT_WINDOW_MS });
}
