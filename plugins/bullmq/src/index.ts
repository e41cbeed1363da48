/**
 * `@kosong/bullmq`: kosong past one machine, on BullMQ and Redis.
 *
 * - {@link RemoteToolset} / {@link ToolWorker}: tool calls run as jobs on worker processes that serve
 *   any local toolset; aborts cross machines, results keep call order, a lost worker is an error result;
 * - {@link RedisContext}: a session's history in Redis, appended a whole step at a time, fenced, with
 *   its durable call ledger (a call's start recorded before it runs) and a claim across processes;
 * - {@link TurnQueue} / {@link AgentWorker}: agent turns as jobs, one per session at a time, events on
 *   a Redis stream, cancellation, recovery after a worker dies; approval decisions signed with a
 *   secret Redis never holds (`approvalSecret`);
 * - {@link RedisGovernance} / {@link RedisUsageLedger}: tenant limits (caps, pacing, budgets) and
 *   the usage ledger in Redis, the same for every worker's kernel;
 * - {@link bullmqPlugin}: remote toolsets for a kernel's tenants.
 *
 * @packageDocumentation
 */
export { DEFAULT_RECONNECT_WINDOW_MS, isRedisUnavailable, type RedisConnection } from './connection.js';
export { DEFAULT_PREFIX, toolQueueName } from './keys.js';
export { ApprovalSignatureError, FencedError, RedisUnavailableError, TurnCancelledError, TurnFailedError } from './errors.js';
export { DEFAULT_APPROVAL_MAX_AGE_MS, MIN_SECRET_BYTES, type ApprovalSecret, type ApprovalSecretOption } from './approval-signature.js';
export { callJobId, toolJobId, toolWorkerLost, type ToolJobData, type ToolJobOutcome } from './tool-job.js';
export { ToolWorker, type ToolWorkerCloseOptions, type ToolWorkerOptions } from './tool-worker.js';
export { RemoteToolset, type RemoteToolsetOptions } from './remote-toolset.js';
export { RedisContext, type RedisContextOptions, type RedisContextTurn } from './redis-context.js';
export { SessionLease, type SessionSnapshot } from './session-lease.js';
export { SessionKeys } from './keys.js';
export { AgentWorker, CANCELLED_REPLY, type AgentWorkerOptions } from './agent-worker.js';
export { TurnQueue, TurnHandle, type TurnQueueOptions, type TurnResumption, type TurnSubmission } from './turn-queue.js';
export { TURN_TTL_SECONDS, type TurnOptions } from './turn-job.js';
export {
  isTerminalTurnEvent,
  serializeError,
  type PublishedAgentEvent,
  type QueuedTurnResult,
  type SerializedError,
  type TerminalTurnEvent,
  type TurnEvent,
} from './turn-events.js';
export { RedisGovernance, type RedisGovernanceOptions } from './governance/redis-governance.js';
export { RedisUsageLedger, type RedisUsageLedgerOptions } from './governance/redis-usage-ledger.js';
export { bullmqPlugin, type BullmqPlugin, type BullmqPluginOptions } from './bullmq-plugin.js';
