/**
 * The Lua scripts of tenant limits and the usage ledger. Time is Redis' (`TIME`), so the leases of
 * every worker are counted on one clock.
 *
 * @module
 */

/** Redis' clock in milliseconds, as `now`. */
const NOW = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
`;

/**
 * Takes a place under a cap. KEYS: holders. ARGV: holder id, cap, lease (ms). Holders whose lease
 * ran out are dropped first (a killed worker's places come back so). Returns `{1, holders}` when
 * taken (the holders with it), `{0, holders}` when the cap is reached.
 * @internal
 */
export const CAP_ACQUIRE_SCRIPT = `${NOW}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local count = redis.call('ZCARD', KEYS[1])
if count >= tonumber(ARGV[2]) then return {0, count} end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return {1, count + 1}
`;

/**
 * Renews the leases of holders that still hold their place. KEYS: holders. ARGV: lease (ms), then
 * the holder ids. Returns the ids whose place was gone (their lease ran out first): never given back.
 * @internal
 */
export const CAP_RENEW_SCRIPT = `${NOW}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local lost = {}
local renewed = 0
for i = 2, #ARGV do
  if redis.call('ZSCORE', KEYS[1], ARGV[i]) then
    redis.call('ZADD', KEYS[1], now + tonumber(ARGV[1]), ARGV[i])
    renewed = renewed + 1
  else
    lost[#lost + 1] = ARGV[i]
  end
end
if renewed > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return lost
`;

/**
 * Records one step in the usage ledger, all or nothing. KEYS: bucket, index, the tenant's spend
 * (any key for no tenant), writers. ARGV: bucket name, writer id, write number, inputOther, output,
 * inputCacheRead, inputCacheCreation, cost in US dollars (`''`: unknown), day, `'1'` if it has a
 * tenant. A write already applied (the same writer's number, or a lower one: resent after a
 * reconnection) is not applied again. Returns 1 if applied, 0 if it had been.
 * @internal
 */
export const USAGE_RECORD_SCRIPT = `
local last = tonumber(redis.call('HGET', KEYS[4], ARGV[2]) or '0')
if tonumber(ARGV[3]) <= last then return 0 end
redis.call('HSET', KEYS[4], ARGV[2], ARGV[3])
redis.call('HINCRBY', KEYS[1], 'steps', 1)
redis.call('HINCRBY', KEYS[1], 'inputOther', ARGV[4])
redis.call('HINCRBY', KEYS[1], 'output', ARGV[5])
redis.call('HINCRBY', KEYS[1], 'inputCacheRead', ARGV[6])
redis.call('HINCRBY', KEYS[1], 'inputCacheCreation', ARGV[7])
if ARGV[8] == '' then
  redis.call('HINCRBY', KEYS[1], 'unknownCostSteps', 1)
else
  redis.call('HINCRBYFLOAT', KEYS[1], 'knownCostUsd', ARGV[8])
  if ARGV[10] == '1' and tonumber(ARGV[8]) ~= 0 then redis.call('HINCRBYFLOAT', KEYS[3], ARGV[9], ARGV[8]) end
end
redis.call('SADD', KEYS[2], ARGV[1])
return 1
`;
