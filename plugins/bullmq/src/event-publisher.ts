/** How a running turn's events reach its Redis stream. @internal @module */
import type { Redis } from 'ioredis';
import { PUBLISH_SCRIPT } from './scripts.js';
import type { TurnEvent } from './turn-events.js';

/** The name of the event-publishing script on a connection (see {@link definePublishCommand}). */
const PUBLISH_COMMAND = 'kosongPublishTurnEvent';

/** Events are trimmed to about this many per turn. */
const MAX_EVENTS_PER_TURN = 100_000;

/**
 * Defines the event-publishing script on a connection, once, before any {@link EventPublisher} on
 * it publishes. Events are the hot path (one per streamed part): sent as EVALSHA, not the whole
 * script each time.
 */
export function definePublishCommand(redis: Redis): void {
  redis.defineCommand(PUBLISH_COMMAND, { numberOfKeys: 2, lua: PUBLISH_SCRIPT });
}

/**
 * Publishes a turn's events in order without waiting for each (one connection keeps them in
 * order), each fenced by the session lease. The first failure (fenced, Redis gone) is reported once.
 */
export class EventPublisher {
  #last: Promise<unknown> = Promise.resolve();
  #failed = false;

  /**
   * @param redis a connection {@link definePublishCommand} was called on.
   * @param stream the turn's event stream; `owner`, `fence`: the session lease's key and token.
   */
  constructor(
    private readonly redis: Redis,
    private readonly stream: string,
    private readonly owner: string,
    private readonly fence: number,
    private readonly onFailure: (error: Error) => void,
  ) {}

  /** Sends an event (it is written after every event published before it). */
  publish(event: TurnEvent): void {
    const publish = (this.redis as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>)[PUBLISH_COMMAND]!;
    const sent = publish.call(this.redis, this.stream, this.owner, this.fence, MAX_EVENTS_PER_TURN, JSON.stringify(event));
    this.#last = sent.catch((error: unknown) => {
      if (this.#failed) return;
      this.#failed = true;
      this.onFailure(error instanceof Error ? error : new Error(String(error)));
    });
  }

  /** Resolves once everything published so far was written (or failed). */
  async flush(): Promise<void> {
    await this.#last;
  }
}
