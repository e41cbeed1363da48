/**
 * Lua scripts of queued turns; every key of one script shares the session's hash tag. @internal
 * @module
 */

/**
 * Registers a turn in submission order. KEYS: seq, pending, turn. ARGV: turn id, tenant (`''`:
 * none), session, submitted-at ms, time to live s. Returns the turn's sequence number.
 */
export const SUBMIT_SCRIPT = `
local seq = redis.call('INCR', KEYS[1])
redis.call('ZADD', KEYS[2], seq, ARGV[1])
redis.call('HSET', KEYS[3], 'tenant', ARGV[2], 'session', ARGV[3], 'seq', seq, 'submittedAt', ARGV[4], 'state', 'queued')
redis.call('EXPIRE', KEYS[3], ARGV[5])
return seq
`;

/**
 * Records the step a turn is running (so that a recovery finds its tool jobs) if the lease is still
 * this token's, and tells whether the turn was cancelled meanwhile. KEYS: meta, owner, turn.
 * ARGV: fence, `turnId\tstepId`. Returns the cancel reason, or `false`.
 */
export const STEP_START_SCRIPT = `
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return redis.error_reply('FENCED') end
redis.call('HSET', KEYS[1], 'turnStepId', ARGV[2])
return redis.call('HGET', KEYS[3], 'cancel')
`;

/**
 * Ends a turn: its terminal event on its stream unless the stream already ends with one (its
 * publisher's XADD may have been lost, refused or cut off by a Redis restart: a reader waits for
 * that event, so a state that says "ended" with no terminal event on the stream would keep it
 * waiting for ever), its terminal state and result, out of the pending set, stream and state kept
 * for the time to live. KEYS: turn, pending, events. ARGV: turn id, state, result JSON, ttl s, the
 * terminal event JSON.
 */
export const FINISH_SCRIPT = `
local last = redis.call('XREVRANGE', KEYS[3], '+', '-', 'COUNT', 1)
local ended = false
if last[1] then
  local fields = last[1][2]
  for i = 1, #fields, 2 do
    if fields[i] == 'e' then
      local ok, event = pcall(cjson.decode, fields[i + 1])
      if ok and type(event) == 'table' and (event.type == 'turn_end' or event.type == 'turn_failed' or event.type == 'turn_cancelled') then ended = true end
    end
  end
end
if not ended then redis.call('XADD', KEYS[3], '*', 'e', ARGV[5]) end
redis.call('HSET', KEYS[1], 'state', ARGV[2], 'result', ARGV[3])
redis.call('EXPIRE', KEYS[1], ARGV[4])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('EXPIRE', KEYS[3], ARGV[4])
return 1
`;
