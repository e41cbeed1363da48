import type { JsonValue } from '@kosong/core';

import type { RequestBlock, RequestMessage } from './request-messages.js';

/** How long a prompt-cache entry lives: the API's default 5 minutes, or 1 hour (dearer to write). */
export type CacheTTL = '5m' | '1h';

/** Block types that can carry a cache breakpoint (thinking blocks cannot). */
const CACHEABLE_BLOCKS: ReadonlySet<JsonValue> = new Set([
  'text',
  'image',
  'document',
  'search_result',
  'tool_use',
  'tool_result',
  'server_tool_use',
  'web_search_tool_result',
]);

/** The `cache_control` value of a breakpoint: `{type: 'ephemeral'}`, with `ttl` only for `1h`. */
export function cacheControl(ttl: CacheTTL): JsonValue {
  return ttl === '1h' ? { type: 'ephemeral', ttl: '1h' } : { type: 'ephemeral' };
}

/**
 * Puts a cache breakpoint on the last block of the last message (kosong spec §7.5), unless that
 * block cannot carry one (thinking). Together with the system prompt and the last tool that is
 * three of the API's four breakpoints: everything before the newest turn is read from the cache.
 * The blocks are the request's own (fresh) objects; they are changed in place.
 */
export function markLastMessage(messages: readonly RequestMessage[], control: JsonValue): void {
  const last = messages.at(-1)?.content.at(-1);
  if (last !== undefined && CACHEABLE_BLOCKS.has(last['type'] ?? null)) last['cache_control'] = control;
}

/** A copy of `block` with a cache breakpoint. */
export function withCacheControl(block: RequestBlock, control: JsonValue): RequestBlock {
  return { ...block, cache_control: control };
}
