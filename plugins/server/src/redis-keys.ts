/** The default prefix of the Redis keys of `redisSessions` and `redisTurns`. */
export const DEFAULT_REDIS_PREFIX = 'kosong:server';

/**
 * The Redis name of a chat: its tenant and id, each percent-encoded (so neither can contain the
 * separator), in braces (a Redis Cluster hash tag: the keys of one chat live on one node).
 */
export function chatKeyName(prefix: string, tenant: string, chatId: string): string {
  return `${prefix}:{${encodeURIComponent(tenant)}/${encodeURIComponent(chatId)}}`;
}
