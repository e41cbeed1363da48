import {
  toolError,
  type ToolCall,
  type ToolContext,
  type ToolResult,
  type ToolReturnValue,
  type Toolset,
} from '@kosong/core';
import { describeError, isToolResult, toolInvalidReturn, toolRuntimeError } from '@kosong/core/toolset-kit';
import { encodeName } from './keys.js';

/** What a tool job carries: one call of one step, for one tenant. */
export interface ToolJobData {
  /** The tenant the call was made for (`null`: none); a worker serves one tenant's queue only. */
  readonly tenant: string | null;
  readonly stepId: string;
  /** Position of the call in its step. */
  readonly index: number;
  readonly toolCall: ToolCall;
  /** The call's `ToolContext.idempotencyKey` (its stable identity under an agent), handed on to the tool. */
  readonly idempotencyKey?: string;
  /** A random id of this enqueue, echoed in the job's outcome: the outcome of an earlier job of the same id is told apart. */
  readonly run?: string;
}

/**
 * What a tool job returns: the call's result, marked `interrupted` when the tool did not run to its
 * own end on the worker (cancelled before it started or while it ran, its worker lost, abandoned at
 * shutdown). A call enqueued again under the same job id (the same idempotency key: a step done
 * again) reuses a result that is not marked, and runs again instead of taking a marked one.
 */
export interface ToolJobOutcome extends ToolResult {
  readonly interrupted?: true;
  /** The `run` of the job's data. */
  readonly run?: string;
}

/**
 * The id of the job of call `index` of step `stepId`: the same call enqueued twice (a client retry,
 * a resent command after a reconnect) is one job.
 */
export function toolJobId(stepId: string, index: number): string {
  return `${encodeName(stepId)}.${index}`;
}

/**
 * The id of the job of a call: from its idempotency key when it has one (the same for every run of
 * the call, also when its step is done again in another process), else from its step id and index.
 */
export function callJobId(context: Pick<ToolContext, 'stepId' | 'index' | 'idempotencyKey'>): string | undefined {
  if (context.idempotencyKey !== undefined) return `k.${encodeName(context.idempotencyKey)}`;
  return context.index === undefined ? undefined : toolJobId(context.stepId, context.index);
}

/** Whether a job's data has the shape of {@link ToolJobData}. */
export function isToolJobData(value: unknown): value is ToolJobData {
  if (typeof value !== 'object' || value === null) return false;
  const data = value as Partial<ToolJobData>;
  const call = data.toolCall as Partial<ToolCall> | undefined;
  return (
    (data.tenant === null || typeof data.tenant === 'string') &&
    typeof data.stepId === 'string' &&
    typeof data.index === 'number' &&
    (data.idempotencyKey === undefined || typeof data.idempotencyKey === 'string') &&
    (data.run === undefined || typeof data.run === 'string') &&
    typeof call === 'object' &&
    call !== null &&
    typeof call.id === 'string' &&
    typeof call.function?.name === 'string'
  );
}

/** The result the model gets when the worker running (or about to rerun) a call died or stalled. */
export function toolWorkerLost(toolName: string): ToolReturnValue {
  return toolError({
    message: `Tool \`${toolName}\` did not finish: the tool worker was lost (its process died or stopped answering). The call was not run again, because the tool may have side effects.`,
    brief: 'Tool worker lost',
  });
}

/**
 * The result the model gets when a call's job vanished from the queue before its outcome was known
 * (removed by the recovery of a turn that another worker took over): it may have run.
 */
export function toolJobVanished(toolName: string): ToolReturnValue {
  return toolError({
    message: `Tool \`${toolName}\` did not finish: its job was removed from the queue before its outcome was known (it may have run). The call was not run again, because the tool may have side effects.`,
    brief: 'Tool job removed',
  });
}

/**
 * The result the model gets when the tool worker shut down while the call ran, and the tool did not
 * stop after its abort: the worker stopped waiting for it.
 */
export function toolAbandonedAtShutdown(toolName: string): ToolReturnValue {
  return toolError({
    message: `Tool \`${toolName}\` did not finish: the tool worker shut down, and the tool did not stop when it was aborted (it may still have been running when the worker stopped waiting for it).`,
    brief: 'Tool worker shut down',
  });
}

/** The result the model gets when a remote call took longer than its timeout. */
export function remoteToolTimedOut(toolName: string, timeoutMs: number): ToolReturnValue {
  return toolError({ message: `Tool \`${toolName}\` timed out after ${timeoutMs} ms`, brief: 'Timed out' });
}

/**
 * Runs one call on a local toolset the way `step()` does: a throw or a rejection becomes an error
 * result, so does anything returned that is not a result. Never rejects.
 */
export async function runLocally(toolset: Toolset, call: ToolCall, context: ToolContext): Promise<ToolResult> {
  try {
    const returned: unknown = await toolset.handle(call, context);
    if (isToolResult(returned)) return returned.toolCallId === call.id ? returned : { toolCallId: call.id, returnValue: returned.returnValue };
    return { toolCallId: call.id, returnValue: toolInvalidReturn(describeType(returned)) };
  } catch (error) {
    return { toolCallId: call.id, returnValue: toolRuntimeError(describeError(error)) };
  }
}

function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value === 'object' ? (value.constructor?.name ?? 'object') : typeof value;
}
