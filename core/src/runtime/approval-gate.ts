import type { ToolCall } from '../message/parts.js';
import { isApprovalDecision, type ApprovalCallback, type ApprovalDecision } from '../tooling/approval.js';
import { describeError, toolDenied, toolNotExecuted, toolRuntimeError } from '../tooling/tool-errors.js';
import type { ToolReturnValue } from '../tooling/tool-result.js';
import type { ToolContext, Toolset } from '../tooling/toolset.js';
import type { HookBus } from './hooks/hook-bus.js';
import { isThenable, type HookFailureKind } from './hooks/hook-guard.js';

/**
 * What the gate lets happen to a call: run it, give it an error result instead (denied, or the
 * approval check failed), or leave it waiting for a decision made later (`deferred`).
 */
export type GateOutcome = { readonly type: 'run' } | { readonly type: 'withheld'; readonly returnValue: ToolReturnValue } | { readonly type: 'deferred' };

/**
 * How a call comes to the gate: asked whether it needs approval (`check`, the usual way); known to
 * need it, with nobody's decision yet (`ask`; `replay`: it was interrupted, and its replay policy asks);
 * or with a decision made already (a resumed step); or to run without a question (`run`: an
 * interrupted call whose tool is safe to run again).
 */
export type GateEntry =
  | { readonly type: 'check' }
  | { readonly type: 'run' }
  | { readonly type: 'ask'; readonly replay?: true }
  | { readonly type: 'decided'; readonly decision: ApprovalDecision };

/** What an {@link ApprovalGate} needs of its step. */
export interface ApprovalGateOptions {
  readonly toolset: Toolset;
  readonly onApproval: ApprovalCallback | undefined;
  /** How long the handler may take to decide; none: as long as it takes (the step's abort still ends the wait). */
  readonly timeoutMs: number | undefined;
  readonly tenant: string | undefined;
  readonly bus: HookBus;
  /** Reports a failure of the approval handler (guarded; never throws). */
  readonly reportFailure: (kind: HookFailureKind, error: unknown) => void;
}

const RUN: GateOutcome = Object.freeze({ type: 'run' });
const DEFERRED: GateOutcome = Object.freeze({ type: 'deferred' });

/** The longest delay `setTimeout` honours; a longer timeout means none. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The approval step of a call's future: whether the call needs approval (the toolset says), and if
 * so, the decision (the handler's, or a deferral when there is none). It never rejects, and it ends
 * as soon as the call's signal aborts, whatever the handler does; the handler's late answer (or
 * failure) is then ignored (a failure still reported), never left unhandled.
 */
export class ApprovalGate {
  constructor(private readonly options: ApprovalGateOptions) {}

  /** Whether a call can need approval in this step: the toolset asks for it, or a resumed step brings decisions. */
  static needed(toolset: Toolset, resumed: boolean): boolean {
    return resumed || typeof toolset.needsApproval === 'function';
  }

  async pass(call: ToolCall, context: ToolContext, entry: GateEntry): Promise<GateOutcome> {
    if (entry.type === 'run') return RUN;
    if (entry.type === 'check') {
      const { toolset } = this.options;
      if (typeof toolset.needsApproval !== 'function') return RUN;
      try {
        if ((await toolset.needsApproval(call, context)) !== true) return RUN;
      } catch (error) {
        return { type: 'withheld', returnValue: toolRuntimeError(`the approval check failed: ${describeError(error)}`) };
      }
    }
    if (context.signal.aborted) return cancelled();
    const index = context.index ?? 0;
    let decision: ApprovalDecision | undefined;
    if (entry.type === 'decided') {
      decision = entry.decision;
    } else {
      const replay = entry.type === 'ask' && entry.replay === true;
      this.options.bus.approvalRequest(replay ? { toolCall: call, toolCallId: call.id, index, replay } : { toolCall: call, toolCallId: call.id, index });
      decision = await this.ask(call, context, replay);
      if (decision === undefined) return cancelled();
    }
    this.options.bus.approvalDecision({ toolCall: call, toolCallId: call.id, index, decision });
    switch (decision.type) {
      case 'approve':
        return RUN;
      case 'defer':
        return DEFERRED;
      default:
        return { type: 'withheld', returnValue: toolDenied(decision.reason) };
    }
  }

  /** The handler's decision, a denial if it fails or times out, a deferral without a handler; `undefined` if the call's signal aborts first. */
  private ask(call: ToolCall, context: ToolContext, replay: boolean): Promise<ApprovalDecision | undefined> {
    const { onApproval, timeoutMs, reportFailure } = this.options;
    if (onApproval === undefined) return Promise.resolve({ type: 'defer' });
    const signal = context.signal;
    const controller = new AbortController();
    return new Promise((resolve) => {
      let done = false;
      let timer: NodeJS.Timeout | undefined;
      const finish = (decision: ApprovalDecision | undefined, reason: unknown): void => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        controller.abort(reason);
        resolve(decision);
      };
      const onAbort = (): void => finish(undefined, signal.reason);
      const fail = (kind: HookFailureKind, error: unknown): void => {
        reportFailure(kind, error);
        finish({ type: 'deny', reason: 'no decision could be made about it (the approval handler failed)' }, error);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      if (timeoutMs !== undefined && timeoutMs <= MAX_TIMER_MS) {
        timer = setTimeout(() => {
          const error = new DOMException(`no approval decision within ${timeoutMs} ms`, 'TimeoutError');
          reportFailure('timeout', error);
          finish({ type: 'deny', reason: `nobody decided about it within ${timeoutMs} ms` }, error);
        }, timeoutMs);
      }
      let returned: unknown;
      try {
        const request = { toolCall: call, index: context.index ?? 0, stepId: context.stepId, tenant: this.options.tenant, signal: controller.signal };
        returned = onApproval(replay ? { ...request, replay: true } : request);
      } catch (error) {
        fail('threw', error);
        return;
      }
      const settle = (value: unknown, kind: HookFailureKind): void => {
        if (isApprovalDecision(value)) finish(value, undefined);
        else if (!done) fail(kind, new TypeError(`the approval handler gave ${describeValue(value)}, not a decision ({ type: 'approve' | 'deny' | 'defer' })`));
      };
      if (!isThenable(returned)) {
        settle(returned, 'threw');
        return;
      }
      Promise.resolve(returned).then(
        (value) => settle(value, 'rejected'),
        (error: unknown) => {
          if (done) reportFailure('rejected', error);
          else fail('rejected', error);
        },
      );
    });
  }
}

function cancelled(): GateOutcome {
  return { type: 'withheld', returnValue: toolNotExecuted('the step was cancelled while the call waited for approval') };
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return JSON.stringify(value.slice(0, 40));
  return typeof value === 'object' ? 'an object' : typeof value;
}
