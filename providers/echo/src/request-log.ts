import type { GenerationOptions, Message, ThinkingEffort, Tool } from '@kosong/core';
import type { OutputFormat } from '@kosong/core/provider-kit';

/** What an offline provider was asked for in one `generate` call, so tests can assert it. */
export interface RecordedRequest {
  readonly systemPrompt: string;
  /** The tools offered (the array the caller passed). */
  readonly tools: readonly Tool[];
  /** How many messages the history had (the history itself is not kept: long sessions would pile it up). */
  readonly historyLength: number;
  /** The effective generation options: the provider's own with the call's merged over them. */
  readonly generation: GenerationOptions;
  /** The provider's thinking effort at the time. */
  readonly thinkingEffort: ThinkingEffort | undefined;
  /** The structured output asked for (absent when none was; an offline provider takes any: its script is its answer). */
  readonly output?: OutputFormat;
}

/** How many requests a {@link RequestLog} keeps by default (the most recent ones). */
export const DEFAULT_REQUEST_LOG_LIMIT = 1000;

/**
 * The most recent requests of an offline provider, oldest first, bounded (so a long-running demo or
 * benchmark does not grow without end). {@link RequestLog.count} counts every request ever recorded.
 */
export class RequestLog {
  private readonly recent: RecordedRequest[] = [];
  private total = 0;

  constructor(private readonly limit: number = DEFAULT_REQUEST_LOG_LIMIT) {}

  /** The kept requests, oldest first. */
  get entries(): readonly RecordedRequest[] {
    return this.recent;
  }

  /** The last request, if any. */
  get last(): RecordedRequest | undefined {
    return this.recent.at(-1);
  }

  /** How many requests were recorded in all (kept or not). */
  get count(): number {
    return this.total;
  }

  /** Records one request (frozen). */
  record(request: {
    readonly systemPrompt: string;
    readonly tools: readonly Tool[];
    readonly history: readonly Message[];
    readonly generation: GenerationOptions;
    readonly thinkingEffort: ThinkingEffort | undefined;
    readonly output?: OutputFormat | undefined;
  }): void {
    const { systemPrompt, tools, history, generation, thinkingEffort, output } = request;
    this.total++;
    const entry: RecordedRequest = { systemPrompt, tools, historyLength: history.length, generation, thinkingEffort };
    this.recent.push(Object.freeze(output === undefined ? entry : { ...entry, output }));
    if (this.recent.length > this.limit) this.recent.shift();
  }
}
