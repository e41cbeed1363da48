import { randomUUID } from 'node:crypto';
import { TurnQueue, type TurnEvent, type TurnHandle } from '@kosong/bullmq';
import type { AgentEvent } from '@kosong/core';
import type { TurnOutcome } from './cli-session.js';
import type { Renderer } from './render/renderer.js';

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
}

/**
 * A CLI session whose turns run on `kosong worker` processes: each turn is submitted to the queue
 * and its events, read from Redis as they happen, are rendered exactly as a local turn's.
 * Ctrl-C cancels the remote turn (its tools included, wherever they run).
 */
export class RemoteCliSession {
  private running: TurnHandle | undefined;
  private cancelling: Promise<void> | undefined;
  private readonly turns: TurnQueue;
  private readonly session: string;

  constructor(private readonly options: RemoteCliSessionOptions) {
    this.turns = new TurnQueue({ connection: options.redis });
    this.session = options.session ?? `cli-${randomUUID()}`;
  }

  /** Whether a turn is running. */
  get busy(): boolean {
    return this.running !== undefined;
  }

  /** Submits one turn and renders it; never throws (failures are rendered and reported as the outcome). */
  async turn(input: string): Promise<TurnOutcome> {
    const { renderer } = this.options;
    renderer.turnStart(input);
    try {
      const { systemPrompt, maxSteps } = this.options;
      const handle = await this.turns.submit({ session: this.session, input, options: { maxSteps, ...(systemPrompt === undefined ? {} : { systemPrompt }) } });
      this.running = handle;
      for await (const event of handle.events()) {
        const outcome = this.render(event);
        if (outcome) return outcome;
      }
      renderer.turnFailed(new Error('the turn ended without an outcome'));
      return 'failed';
    } catch (error) {
      renderer.turnFailed(error);
      return 'failed';
    } finally {
      this.running = undefined;
      await this.cancelling;
      this.cancelling = undefined;
    }
  }

  /** Renders one event; returns the outcome when the event ends the turn. */
  private render(event: TurnEvent): TurnOutcome | undefined {
    const { renderer } = this.options;
    switch (event.type) {
      case 'turn_start':
        return undefined;
      case 'turn_resumed':
        renderer.info(`the worker running this turn was lost; another one goes on from step ${event.fromStep}`);
        return undefined;
      case 'turn_end':
        renderer.turnEnd(event.result);
        return 'completed';
      case 'turn_failed': {
        const error = new Error(event.error.message);
        error.name = event.error.name;
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

  /** Cancels the running turn on its worker; returns whether one was running. */
  interrupt(): boolean {
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
