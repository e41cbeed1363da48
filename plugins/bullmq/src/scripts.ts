/**
 * The Lua scripts of this package. Each runs atomically in Redis, and every key it touches shares
 * the session's hash tag. @internal
 * @module
 */

/**
 * The checks every write of a session's context starts with. KEYS: history, meta, owner, ledger.
 * ARGV[1]: fence (`''`: no lease), ARGV[2]: write id (`writer:n`, `n` counting that writer's writes
 * from 1), ARGV[3]: expected history length (`-1`: do not check).
 *
 * A write of the writer of the session's `lastWrite`, numbered at or below it, was applied already:
 * a command resent after a reconnection (its reply was lost when Redis went away) answers `APPLIED`
 * and changes nothing. By number, not by equality: a writer sends its writes without waiting for
 * the replies of those before (see `RedisContext`), so several may be resent together, and each
 * one but the last would otherwise find its own effects and fail as `STALE`. (Redis runs one
 * connection's scripts in order, and a write that Redis refused makes the ones after it fail their
 * checks too: a later write applied means every earlier one was.) Then `FENCED` (the lease is not
 * this token's any more) and `STALE` (someone else appended since this copy was read). A write that
 * goes ahead records its id with `APPLIED_BY`.
 */
const WRITE_CHECKS = `
local lastWrite = redis.call('HGET', KEYS[2], 'lastWrite')
if lastWrite then
  local lastWriter, lastN = string.match(lastWrite, '^(.*):(%d+)$')
  local writer, n = string.match(ARGV[2], '^(.*):(%d+)$')
  if lastWrite == ARGV[2] or (writer and writer == lastWriter and tonumber(n) <= tonumber(lastN)) then return 'APPLIED' end
end
if ARGV[1] ~= '' and redis.call('GET', KEYS[3]) ~= ARGV[1] then return redis.error_reply('FENCED') end
local expected = tonumber(ARGV[3])
if expected >= 0 and redis.call('LLEN', KEYS[1]) ~= expected then return redis.error_reply('STALE') end
`;

/** Records the write's id (see {@link WRITE_CHECKS}). */
const APPLIED_BY = `redis.call('HSET', KEYS[2], 'lastWrite', ARGV[2])`;

/**
 * Appends messages to a session, all or none, and closes the open step of the call ledger (its
 * records are history now): the ledger is deleted in the same script. KEYS: history, meta, owner,
 * ledger. ARGV: fence, write id, expected history length, turn id (`''`: none), turn usage JSON
 * (`''`: unchanged), then the messages. Errors: those of {@link WRITE_CHECKS}, `PENDING` (a step
 * waits for approval: see {@link DEFER_STEP_SCRIPT}).
 */
export const APPEND_SCRIPT = `${WRITE_CHECKS}
if redis.call('HEXISTS', KEYS[2], 'pendingStepId') == 1 then return redis.error_reply('PENDING') end
local turn = ARGV[4]
if turn ~= '' then
  if redis.call('HGET', KEYS[2], 'turn') ~= turn then
    redis.call('HSET', KEYS[2], 'turn', turn, 'turnSteps', 0, 'turnUsage', '')
  else
    redis.call('HINCRBY', KEYS[2], 'turnSteps', 1)
  end
  if ARGV[5] ~= '' then redis.call('HSET', KEYS[2], 'turnUsage', ARGV[5]) end
end
${APPLIED_BY}
redis.call('DEL', KEYS[4])
redis.call('RPUSH', KEYS[1], unpack(ARGV, 6))
return 'OK'
`;

/**
 * Compacts the history: appends one compaction record (the summary, and how many messages before it
 * it replaces) to the history list, whose entries before it stay as they were. KEYS: history, meta,
 * owner, ledger. ARGV: fence, write id, expected history length, the record's JSON. Errors: those
 * of {@link WRITE_CHECKS}, `PENDING` (a step waits for approval), `OPEN_STEP` (the call ledger
 * holds a step not in the history).
 */
export const COMPACT_SCRIPT = `${WRITE_CHECKS}
if redis.call('HEXISTS', KEYS[2], 'pendingStepId') == 1 then return redis.error_reply('PENDING') end
if redis.call('LLEN', KEYS[4]) > 0 then return redis.error_reply('OPEN_STEP') end
${APPLIED_BY}
redis.call('RPUSH', KEYS[1], ARGV[4])
return 'OK'
`;

/**
 * Records a step that waits for approval (meta fields `pendingStep`, `pendingStepId`), replacing one
 * of the same step. The open step of the ledger stays open: its records are those of the step.
 * KEYS: history, meta, owner, ledger. ARGV: fence, write id, expected history length, step id, the
 * pending step JSON. Errors: those of {@link WRITE_CHECKS}, `OTHER_PENDING` (another step waits).
 */
export const DEFER_STEP_SCRIPT = `${WRITE_CHECKS}
local waiting = redis.call('HGET', KEYS[2], 'pendingStepId')
if waiting and waiting ~= ARGV[4] then return redis.error_reply('OTHER_PENDING') end
${APPLIED_BY}
redis.call('HSET', KEYS[2], 'pendingStepId', ARGV[4], 'pendingStep', ARGV[5])
return 'OK'
`;

/**
 * Completes the step that waits for approval: drops it, appends its messages and deletes the ledger
 * (the open step is closed), all or none. KEYS: history, meta, owner, ledger. ARGV: fence, write
 * id, expected history length, step id, turn id (`''`: none), turn usage JSON (`''`: unchanged),
 * then the messages. A turn that starts here (a resumption) goes on counting the steps of the turn
 * that deferred the step (this one is one more). Errors: those of {@link WRITE_CHECKS},
 * `NOT_PENDING` (the step does not wait).
 */
export const COMPLETE_STEP_SCRIPT = `${WRITE_CHECKS}
if redis.call('HGET', KEYS[2], 'pendingStepId') ~= ARGV[4] then return redis.error_reply('NOT_PENDING') end
redis.call('HDEL', KEYS[2], 'pendingStepId', 'pendingStep')
local turn = ARGV[5]
if turn ~= '' then
  if redis.call('HGET', KEYS[2], 'turn') ~= turn then
    redis.call('HSET', KEYS[2], 'turn', turn)
  end
  redis.call('HINCRBY', KEYS[2], 'turnSteps', 1)
  if ARGV[6] ~= '' then redis.call('HSET', KEYS[2], 'turnUsage', ARGV[6]) end
end
${APPLIED_BY}
redis.call('DEL', KEYS[4])
redis.call('RPUSH', KEYS[1], unpack(ARGV, 7))
return 'OK'
`;

/**
 * Adds records to the call ledger (calls' starts and outcomes, in order), if the writer's copy of the
 * session is the stored one: same history length, same step waiting for approval (or none), same
 * ledger length. KEYS: history, meta, owner, ledger. ARGV: fence, write id, expected history length,
 * expected pending step id (`''`: none), expected ledger length, then the records' JSON. Errors: those of
 * {@link WRITE_CHECKS}; `PENDING` (a step was deferred or completed meanwhile), `STALE` (another
 * writer added records).
 */
export const LEDGER_RECORD_SCRIPT = `${WRITE_CHECKS}
if (redis.call('HGET', KEYS[2], 'pendingStepId') or '') ~= ARGV[4] then return redis.error_reply('PENDING') end
if redis.call('LLEN', KEYS[4]) ~= tonumber(ARGV[5]) then return redis.error_reply('STALE') end
${APPLIED_BY}
redis.call('RPUSH', KEYS[4], unpack(ARGV, 6))
return 'OK'
`;

/**
 * Takes the session lease for a writer whose copy of the session is the stored one (same history
 * length, same pending step id, same ledger length), if nobody holds it. KEYS: owner, fence,
 * history, meta, ledger. ARGV: ttl ms, expected history length, expected pending step id (`''`:
 * none), expected ledger length. Returns the new token, `0` (held), or `-1` (the session changed).
 */
export const CLAIM_SCRIPT = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
if redis.call('LLEN', KEYS[3]) ~= tonumber(ARGV[2]) then return -1 end
if (redis.call('HGET', KEYS[4], 'pendingStepId') or '') ~= ARGV[3] then return -1 end
if redis.call('LLEN', KEYS[5]) ~= tonumber(ARGV[4]) then return -1 end
local token = redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], token, 'PX', ARGV[1])
return token
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
