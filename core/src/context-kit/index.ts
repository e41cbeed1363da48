/**
 * `@kosong/core/context-kit`: what a context store is written with — an {@link AgentContext} kept
 * somewhere else than core's {@link LinearContext} file (e.g. `@kosong/bullmq`'s `RedisContext`), or
 * a call ledger of its own.
 *
 * - the contract: {@link AgentContext} and its restore report, the {@link PendingStep} of an
 *   approval wait, the {@link CallLedger} (a step's started and settled tool calls) and the
 *   {@link StepLedger} a step writes to ({@link stepLedgerOf});
 * - the state a store keeps: {@link OpenStepState} (a step's open calls, rebuilt from its records),
 *   {@link MemoryCallLedger} (a ledger in memory, for a store without one);
 * - the records' JSON, the wire format of the Python kosong: call records (`callRecordToJSON`,
 *   `callRecordFromJSON`, `isCallRecordJSON`), pending steps and tool results (`pendingStepToJSON`,
 *   `pendingStepFromJSON`, `toolResultToJSON`, `toolResultFromJSON`), and the roles these records
 *   have in a history (`CALL_STARTED_ROLE`, `CALL_SETTLED_ROLE`, `PENDING_STEP_ROLE`,
 *   `STEP_RESUMED_ROLE`);
 * - compaction: the {@link CompactionRecord} a context's `compact()` stores, its JSON
 *   (`compactionToJSON`, `compactionFromJSON`, `isCompactionJSON`, `COMPACTION_ROLE`), and how a
 *   summary message is known (`SUMMARY_HEADER`, `isSummary`);
 * - files: {@link SessionLock} (one writer per session file), the context errors and their details;
 * - {@link toolResultToMessage}: the tool message a result becomes in a history.
 *
 * The message model and its JSON (`messageToJSON`, `messageFromJSON`) come from `@kosong/core`.
 *
 * @packageDocumentation
 */
export type { AgentContext, ContextRestoreReport } from '../agent/context.js';
export { pendingApprovals, type PendingApproval, type PendingStep } from '../agent/pending-step.js';
export {
  MemoryCallLedger,
  OpenStepState,
  stepLedgerOf,
  type CallLedger,
  type CallOutcomeRecord,
  type CallRecord,
  type CallStartRecord,
  type LedgerCall,
  type OpenStep,
  type RecordStartOptions,
} from '../agent/call-ledger.js';
export type { StepLedger } from '../runtime/step-ledger.js';
export { CALL_SETTLED_ROLE, CALL_STARTED_ROLE, callRecordFromJSON, callRecordToJSON, isCallRecordJSON } from '../agent/ledger-json.js';
export { PENDING_STEP_ROLE, STEP_RESUMED_ROLE, pendingStepFromJSON, pendingStepToJSON, toolResultFromJSON, toolResultToJSON } from '../agent/pending-step-json.js';
export { SessionLock, type SessionLockOptions } from '../agent/session-lock.js';
export { SUMMARY_HEADER, isSummary, type Compaction, type CompactionRecord, type Summarizer } from '../agent/compaction.js';
export { COMPACTION_ROLE, compactionFromJSON, compactionToJSON, isCompactionJSON } from '../agent/compaction-json.js';
export * from '../agent/context-errors.js';
export { toolResultToMessage } from '../agent/tool-message.js';
