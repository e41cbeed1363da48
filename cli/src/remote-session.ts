import { randomUUID } from 'node:crypto';
import { TurnQueue, type QueuedTurnResult, type TurnEvent, type TurnHandle, type TurnOptions } from '@kosong/bullmq';
import type { AgentEvent, ApprovalCallback, ApprovalDecision, Message, PendingApproval } from '@kosong/core';
import type { TurnOutcome } from './cli-session.js';
import type { Renderer } from './render/renderer.js';
import { APPROVAL_SECRET_VARIABLE } from './approval-secret.js';

/** How a remote CLI session is set up. */
export interface RemoteCliSessionOptions {
  /** The Redis the workers (`kosong worker`) take turns from. */
  readonly redis: string;
  readonly renderer: Renderer;
  /** The system prompt; default: the worker's. */
  readonly systemPrompt?: string | undefined;
  readonly maxSteps: number;
  /** The session id in Redis; default: a new one (the conversation lasts as long as this process). */
  readonly session?: string | undefined;
  /**
   * Decides about the calls a turn leaves waiting for approval (`stopReason: 'approval_required'`),
   * one at a time; the decisions are sent back with `TurnQueue.resume` and the turn goes on.
   */
  readonly onApproval: ApprovalCallback;
  /** The secret decisions are signed with (`KOSONG_APPROVAL_SECRET`, the workers'); none: they go unsigned. */
  readonly approvalSecret?: string | undefined;
}

/** A turn followed to its end: how it ended, and the calls it left waiting, if any. */
type FollowedTurn =
  | TurnOutcome
  | { readonly waiting: QueuedTurnResult & { readonly pendingApprovals: readonly PendingApproval[] } }
  /** Refused by the worker because calls of an earlier turn of the session still wait for approval. */
  | { readonly blocked: Error };

/**
 * A CLI session whose turns run on `kosong worker` processes: each turn is submitted to the queue
 * and its events, read from Redis as they happen, are rendered exactly as a local turn's.
 * Ctrl-C cancels the remote turn (its tools included, wherever they run).
 */
export class RemoteCliSession {
  private running: TurnHandle | undefined;
  /** Aborts the questions about waiting calls (Ctrl-C while one is asked). */
  private asking: AbortController | undefined;
  /** Calls a turn left waiting when Ctrl-C stopped the questions: asked about again before the next turn. */
  private waiting: QueuedTurnResult | undefined;
  private cancelling: Promise<void> | undefined;
  private readonly turns: TurnQueue;
  private readonly session: string;

  constructor(private readonly options: RemoteCliSessionOptions) {
    this.turns = new TurnQueue({ connection: options.redis, ...(options.approvalSecret === undefined ? {} : { approvalSecret: options.approvalSecret }) });
    this.session = options.session ?? `cli-${randomUUID()}`;
  }

  /** Whether a turn is running (or its waiting calls are being asked about). */
  /** Never: a session in Redis is not one of the sessions directory's (it has no saved id to tell). */
  get saved(): boolean {
    return false;
  }

  get busy(): boolean {
    return this.running !== undefined || this.asking !== undefined;
  }

  /**
   * Submits one turn and renders it; never throws (failures are rendered and reported as the
   * outcome). A turn that ends with calls waiting for approval has them decided (see
   * {@link RemoteCliSessionOptions.onApproval}) and goes on with a resumption, until it ends otherwise.
   * Calls left waiting by an earlier turn stopped at its question are decided first.
   */
  async turn(input: string, messages?: readonly Message[]): Promise<TurnOutcome> {
    // MCP resources and prompts are the local session's (--mcp-config is refused with --redis).
    if (messages !== undefined) throw new TypeError('RemoteCliSession.turn: a turn of a worker takes text only');
    const { renderer } = this.options;
    renderer.turnStart(input);
    try {
      const { systemPrompt, maxSteps } = this.options;
      const options: TurnOptions = { maxSteps, ...(systemPrompt === undefined ? {} : { systemPrompt }) };
      if (this.waiting) {
        renderer.info('calls of the last turn still wait for approval: deciding them first');
        const earlier = await this.settle(this.waiting, options);
        if (earlier === 'failed' || earlier === 'interrupted') return earlier;
      }
      const submit = async (): Promise<FollowedTurn> => this.follow(await this.turns.submit({ session: this.session, input, options }));
      let followed = await submit();
      if (typeof followed !== 'string' && 'blocked' in followed) {
        // Calls an earlier process left waiting in this session (e.g. `run` stopped at the question):
        // a resumption without decisions ends waiting for them again, naming them; they are decided first.
        renderer.info('calls of an earlier turn of this session wait for approval: deciding them first');
        const earlier = await this.follow(await this.turns.resume({ session: this.session, decisions: {}, options }));
        const outcome = await this.outcome(earlier, options);
        if (outcome === 'failed' || outcome === 'interrupted') return outcome;
        followed = await submit();
      }
      return await this.outcome(followed, options);
    } catch (error) {
      renderer.turnFailed(error);
      return 'failed';
    } finally {
      this.running = undefined;
      this.asking = undefined;
      await this.cancelling;
      this.cancelling = undefined;
    }
  }

  /** How a followed turn ends: its calls that wait decided first. */
  private async outcome(followed: FollowedTurn, options: TurnOptions): Promise<TurnOutcome> {
    if (typeof followed === 'string') return followed;
    if ('waiting' in followed) return this.settle(followed.waiting, options);
    this.options.renderer.turnFailed(followed.blocked);
    return 'failed';
  }

  /** Decides about the waiting calls and follows the resumption, until the turn ends without any. */
  private async settle(waiting: QueuedTurnResult, options: TurnOptions): Promise<TurnOutcome> {
    const { renderer } = this.options;
    for (let result = waiting; ; ) {
      this.waiting = result;
      const decisions = await this.decide(result.pendingApprovals ?? []);
      if (decisions === undefined) {
        renderer.turnEnd(result);
        renderer.info('stopped: the calls above still wait for approval; you are asked about them again before your next message');
        return 'interrupted';
      }
      this.waiting = undefined;
      // Signed (with a secret) for the calls as the user was shown them.
      const shown = result.pendingApprovals?.length ? { pendingApprovals: result.pendingApprovals } : {};
      const followed = await this.follow(await this.turns.resume({ session: this.session, decisions, options, ...shown }));
      if (typeof followed === 'string' || !('waiting' in followed)) return this.outcome(followed, options);
      result = followed.waiting;
    }
  }

  /** The decisions about the waiting calls, asked one at a time; `undefined` when Ctrl-C stopped the questions. */
  private async decide(pending: readonly PendingApproval[]): Promise<Record<string, ApprovalDecision> | undefined> {
    const controller = new AbortController();
    this.asking = controller;
    try {
      const decisions: Record<string, ApprovalDecision> = {};
      for (const { toolCall, index, stepId } of pending) {
        const decision = await this.options.onApproval({ toolCall, index, stepId, tenant: undefined, signal: controller.signal });
        if (controller.signal.aborted) return undefined;
        decisions[toolCall.id] = decision;
      }
      return decisions;
    } finally {
      this.asking = undefined;
    }
  }

  /** Follows a queued turn to its end, rendering its events. */
  private async follow(handle: TurnHandle): Promise<FollowedTurn> {
    this.running = handle;
    try {
      for await (const event of handle.events()) {
        const outcome = this.render(event);
        if (outcome) return outcome;
      }
      this.options.renderer.turnFailed(new Error('the turn ended without an outcome'));
      return 'failed';
    } finally {
      this.running = undefined;
    }
  }

  /** Renders one event; returns the outcome when the event ends the turn (a turn whose calls wait is not rendered as ended). */
  private render(event: TurnEvent): FollowedTurn | undefined {
    const { renderer } = this.options;
    switch (event.type) {
      case 'turn_start':
        return undefined;
      case 'turn_resumed':
        renderer.info(`the worker running this turn was lost; another one goes on from step ${event.fromStep}`);
        return undefined;
      case 'turn_end': {
        const pendingApprovals = event.result.pendingApprovals ?? [];
        if (event.result.stopReason === 'approval_required' && pendingApprovals.length > 0) return { waiting: { ...event.result, pendingApprovals } };
        renderer.turnEnd(event.result);
        return event.result.stopReason === 'max_steps' ? 'max_steps' : 'completed';
      }
      case 'turn_failed': {
        const error = new Error(event.error.message);
        error.name = event.error.name;
        if (error.name === 'ApprovalPendingError') return { blocked: error };
        if (error.name === 'ApprovalSignatureError') error.message += ` (${APPROVAL_SECRET_VARIABLE} must be the worker's)`;
        renderer.turnFailed(error);
        return 'failed';
      }
      case 'turn_cancelled':
        renderer.interrupted();
        return 'interrupted';
      case 'retry': {
        const error = Object.assign(new Error(event.error.message), { name: event.error.name });
        renderer.event({ ...event, error });
        return undefined;
      }
      default:
        renderer.event(event as AgentEvent);
        return undefined;
    }
  }

  /** Cancels the running turn on its worker, or stops the questions about its waiting calls; returns whether one was running. */
  interrupt(): boolean {
    if (this.asking) {
      this.asking.abort(new Error('Interrupted by the user'));
      return true;
    }
    const handle = this.running;
    if (!handle) return false;
    this.cancelling = handle.cancel('Interrupted by the user').catch((error: unknown) => this.options.renderer.info(`could not cancel the turn: ${String(error)}`));
    return true;
  }

  /** Stops following turns and closes the connections. */
  async close(): Promise<void> {
    this.options.renderer.close();
    await this.turns.close();
  }
}
