/**
 * The Lua scripts of this package. Each runs atomically in Redis, and every key it touches shares
 * the session's hash tag. @internal
 * @module
 */

/**
 * Appends messages to a session, all or none. KEYS: history, meta, owner. ARGV: fence (`''`: no
 * lease), expected history length (`-1`: do not check), turn id (`''`: none), turn usage JSON (`''`:
 * unchanged), then the messages. Returns the new length, or an error: `FENCED` (the lease is not
 * this token's any more), `STALE` (someone else appended since this copy was read), `PENDING` (a
 * step waits for approval: see {@link DEFER_STEP_SCRIPT}).
 */
export const APPEND_SCRIPT = `
local fence = ARGV[1]
if fence ~= '' and redis.call('GET', KEYS[3]) ~= fence then return redis.error_reply('FENCED') end
local expected = tonumber(ARGV[2])
if expected >= 0 and redis.call('LLEN', KEYS[1]) ~= expected then return redis.error_reply('STALE') end
if redis.call('HEXISTS', KEYS[2], 'pendingStepId') == 1 then return redis.error_reply('PENDING') end
local turn = ARGV[3]
if turn ~= '' then
  if redis.call('HGET', KEYS[2], 'turn') ~= turn then
    redis.call('HSET', KEYS[2], 'turn', turn, 'turnSteps', 0, 'turnUsage', '')
  else
    redis.call('HINCRBY', KEYS[2], 'turnSteps', 1)
  end
  if ARGV[4] ~= '' then redis.call('HSET', KEYS[2], 'turnUsage', ARGV[4]) end
end
return redis.call('RPUSH', KEYS[1], unpack(ARGV, 5))
`;

/**
 * Records a step that waits for approval (meta fields `pendingStep`, `pendingStepId`), replacing one
 * of the same step. KEYS: history, meta, owner. ARGV: fence, expected history length, step id, the
 * pending step JSON. Errors: `FENCED`, `STALE`, `OTHER_PENDING` (another step waits).
 */
export const DEFER_STEP_SCRIPT = `
if ARGV[1] ~= '' and redis.call('GET', KEYS[3]) ~= ARGV[1] then return redis.error_reply('FENCED') end
local expected = tonumber(ARGV[2])
if expected >= 0 and redis.call('LLEN', KEYS[1]) ~= expected then return redis.error_reply('STALE') end
local waiting = redis.call('HGET', KEYS[2], 'pendingStepId')
if waiting and waiting ~= ARGV[3] then return redis.error_reply('OTHER_PENDING') end
return redis.call('HSET', KEYS[2], 'pendingStepId', ARGV[3], 'pendingStep', ARGV[4])
`;

/**
 * Completes the step that waits for approval: drops it and appends its messages, all or none.
 * KEYS: history, meta, owner. ARGV: fence, expected history length, step id, turn id (`''`: none),
 * turn usage JSON (`''`: unchanged), then the messages. A turn that starts here (a resumption) goes
 * on counting the steps of the turn that deferred the step (this one is one more). Errors:
 * `FENCED`, `STALE`, `NOT_PENDING` (the step does not wait).
 */
export const COMPLETE_STEP_SCRIPT = `
if ARGV[1] ~= '' and redis.call('GET', KEYS[3]) ~= ARGV[1] then return redis.error_reply('FENCED') end
local expected = tonumber(ARGV[2])
if expected >= 0 and redis.call('LLEN', KEYS[1]) ~= expected then return redis.error_reply('STALE') end
if redis.call('HGET', KEYS[2], 'pendingStepId') ~= ARGV[3] then return redis.error_reply('NOT_PENDING') end
redis.call('HDEL', KEYS[2], 'pendingStepId', 'pendingStep')
local turn = ARGV[4]
if turn ~= '' then
  if redis.call('HGET', KEYS[2], 'turn') ~= turn then
    redis.call('HSET', KEYS[2], 'turn', turn)
  end
  redis.call('HINCRBY', KEYS[2], 'turnSteps', 1)
  if ARGV[5] ~= '' then redis.call('HSET', KEYS[2], 'turnUsage', ARGV[5]) end
end
return redis.call('RPUSH', KEYS[1], unpack(ARGV, 6))
`;

/** Sets meta fields if the lease is still this token's. KEYS: meta, owner. ARGV: fence, field, value, …. */
export const FENCED_HSET_SCRIPT = `
if ARGV[1] ~= '' and redis.call('GET', KEYS[2]) ~= ARGV[1] then return redis.error_reply('FENCED') end
return redis.call('HSET', KEYS[1], unpack(ARGV, 2))
`;

/** Takes the session lease if nobody holds it. KEYS: owner, fence. ARGV: ttl ms. Returns the new token, or 0. */
export const ACQUIRE_SCRIPT = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local token = redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], token, 'PX', ARGV[1])
return token
`;

/** Extends the lease if it is still this token's. KEYS: owner. ARGV: token, ttl ms. Returns 1 or 0. */
export const RENEW_SCRIPT = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
return redis.call('PEXPIRE', KEYS[1], ARGV[2])
`;

/** Drops the lease if it is still this token's. KEYS: owner. ARGV: token. */
export const RELEASE_SCRIPT = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
return redis.call('DEL', KEYS[1])
`;

/**
 * Adds an event to a turn's stream if the lease is still this token's. KEYS: events, owner.
 * ARGV: fence (`''`: unfenced), max length, the event JSON. Returns the entry id.
 */
export const PUBLISH_SCRIPT = `
if ARGV[1] ~= '' and redis.call('GET', KEYS[2]) ~= ARGV[1] then return redis.error_reply('FENCED') end
return redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[2], '*', 'e', ARGV[3])
`;
