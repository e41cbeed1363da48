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
 * Admits a step against every limit it has, all or nothing (one round trip). KEYS: the step cap's
 * holders, the requests window, the tokens window, the tenant's spend, the tool-call cap's holders.
 * ARGV: holder id, cap (`''`: no gate), lease (ms), requests per window (`''`: none), tokens per
 * window (`''`: none), the step's tokens, budget in US dollars (`''`: none), the first day of its
 * period, the window (s), the tool-call cap (`''`: none), the places to take under it for the
 * step's calls, their ids' prefix (ids `<prefix>.1`, `<prefix>.2`, …), the tenant (`''`: no check of
 * its limits' version) and the version of its shared limits the step is admitted under (KEYS 6 and
 * 7: the versions and the limits of tenants; a newer version there: `{0, 'limits', version, json}`,
 * nothing taken; an older one — Redis lost them — is not checked). A pacing window is
 * rate-limiter-flexible's (`RateLimiterRedis`): an integer of points, expiring with its window,
 * made by the first take after the previous one closed. Returns `{1, holders, calls, callHolders}`
 * when everything was taken (holders with this place; the places taken for calls — as many as
 * wanted and free, maybe none: not a condition of the admission — and the tool-call cap's holders
 * with them), else `{0, what}` with what had no room (`'steps'`, `'requests'`, `'tokens'`,
 * `'budget'`) and nothing taken.
 * @internal
 */
export const STEP_ADMIT_SCRIPT = `${NOW}
if ARGV[13] ~= '' then
  local version = tonumber(redis.call('HGET', KEYS[6], ARGV[13]) or '0')
  if version > tonumber(ARGV[14]) then return {0, 'limits', version, redis.call('HGET', KEYS[7], ARGV[13]) or ''} end
end
local holders = 0
if ARGV[2] ~= '' then
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
  holders = redis.call('ZCARD', KEYS[1])
  if holders >= tonumber(ARGV[2]) then return {0, 'steps'} end
end
local function counted(key)
  return tonumber(redis.call('GET', key) or '0')
end
if ARGV[4] ~= '' and counted(KEYS[2]) + 1 > tonumber(ARGV[4]) then return {0, 'requests'} end
if ARGV[5] ~= '' and counted(KEYS[3]) + tonumber(ARGV[6]) > tonumber(ARGV[5]) then return {0, 'tokens'} end
if ARGV[7] ~= '' then
  local spend = redis.call('HGETALL', KEYS[4])
  local spent = 0
  local from = tonumber(ARGV[8])
  for i = 1, #spend, 2 do
    if tonumber(spend[i]) >= from then spent = spent + tonumber(spend[i + 1]) end
  end
  if spent >= tonumber(ARGV[7]) then return {0, 'budget'} end
end
local function take(key, points)
  redis.call('SET', key, 0, 'EX', ARGV[9], 'NX')
  redis.call('INCRBY', key, points)
  if redis.call('PTTL', key) == -1 then redis.call('EXPIRE', key, ARGV[9]) end
end
if ARGV[2] ~= '' then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  holders = holders + 1
end
if ARGV[4] ~= '' then take(KEYS[2], 1) end
if ARGV[5] ~= '' and tonumber(ARGV[6]) > 0 then take(KEYS[3], ARGV[6]) end
local calls = 0
local callHolders = 0
if ARGV[10] ~= '' and tonumber(ARGV[11]) > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', now)
  callHolders = redis.call('ZCARD', KEYS[5])
  calls = math.max(0, math.min(tonumber(ARGV[11]), tonumber(ARGV[10]) - callHolders))
  for i = 1, calls do redis.call('ZADD', KEYS[5], now + tonumber(ARGV[3]), ARGV[12] .. '.' .. i) end
  if calls > 0 then redis.call('PEXPIRE', KEYS[5], ARGV[3]) end
  callHolders = callHolders + calls
end
return {1, holders, calls, callHolders}
`;

/**
 * Ends a step, all or nothing: records its usage in the ledger, gives back its place under the
 * step cap and the places it took for its calls, and corrects its tokens. KEYS: bucket, index, the
 * tenant's spend (any key for no tenant), writers, the cap's holders, the tokens window, the
 * tool-call cap's holders (any key for none). ARGV: bucket name, writer id, write
 * number, inputOther, output, inputCacheRead, inputCacheCreation, cost in US dollars (`''`:
 * unknown), day, `'1'` if it has a tenant, `'1'` to record (`'0'`: only the give-back and the
 * correction), holder id to give back (`''`: none), tokens to count more (negative: fewer, never
 * below what the window counts; `0`: none), the window (s), then the ids of tool-call places to
 * give back (none or more). A write already applied (the same
 * writer's number, or a lower one: resent after a reconnection) is not applied again. Returns 1 if
 * applied, 0 if it had been.
 * @internal
 */
export const STEP_END_SCRIPT = `
local last = tonumber(redis.call('HGET', KEYS[4], ARGV[2]) or '0')
if tonumber(ARGV[3]) <= last then return 0 end
redis.call('HSET', KEYS[4], ARGV[2], ARGV[3])
if ARGV[11] == '1' then
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
end
if ARGV[12] ~= '' then redis.call('ZREM', KEYS[5], ARGV[12]) end
for i = 15, #ARGV do redis.call('ZREM', KEYS[7], ARGV[i]) end
local delta = tonumber(ARGV[13])
if delta > 0 then
  redis.call('SET', KEYS[6], 0, 'EX', ARGV[14], 'NX')
  redis.call('INCRBY', KEYS[6], delta)
elseif delta < 0 then
  local back = math.min(-delta, tonumber(redis.call('GET', KEYS[6]) or '0'))
  if back > 0 then redis.call('DECRBY', KEYS[6], back) end
end
return 1
`;

/**
 * Shares a tenant's limits: a new version of them, announced. KEYS: the versions, the limits. ARGV:
 * the tenant, the JSON of its limits, the channel. Returns the version.
 * @internal
 */
export const LIMITS_SHARE_SCRIPT = `
local version = redis.call('HINCRBY', KEYS[1], '', 1)
redis.call('HSET', KEYS[1], ARGV[1], version)
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('PUBLISH', ARGV[3], ARGV[1])
return version
`;
