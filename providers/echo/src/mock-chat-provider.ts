import type { Message, StreamedMessagePart, Tool } from '@kosong/core';
import {
  BaseChatProvider,
  type FinishReason,
  type GenerationOptions,
  type ProviderChanges,
  type ProviderGenerateOptions,
  type StreamedMessage,
  type ThinkingEffort,
  type TokenUsage,
} from '@kosong/core/provider-kit';

import { PartsStream } from './parts-stream.js';
import { RequestLog, type RecordedRequest } from './request-log.js';

/** Options of a {@link MockChatProvider}. */
export interface MockChatProviderOptions {
  /** Delay before each part, in ms (0: yield to the event loop with a timer; undefined: no delay). */
  readonly delayMs?: number;
  /** Throw `error` after yielding this many parts (0: before the first part). */
  readonly errorAfter?: { readonly parts: number; readonly error: unknown };
  /** Reject `generate` itself with this error (the request fails before any stream exists). */
  readonly generateError?: unknown;
  /**
   * How the stream reacts to an aborted signal. `prompt` (default): a pending delay ends at once and
   * the stream throws the signal's reason. `ignore`: the stream goes on as if nothing happened,
   * like a misbehaving provider.
   */
  readonly onAbort?: 'prompt' | 'ignore';
  readonly id?: string;
  readonly usage?: TokenUsage;
  readonly finishReason?: FinishReason;
  readonly traceId?: string;
  readonly modelName?: string;
}

/**
 * A provider that streams the parts it was given, for tests and benchmarks. Every `generate` call
 * streams the same part objects again (parts are immutable, so that is safe).
 *
 * It takes every generation option and records what each call asked for ({@link MockChatProvider.requests});
 * a bad value, or a `toolChoice` naming a tool the call does not offer, rejects `generate` with an
 * `InvalidGenerationOptionError`, as a real provider would.
 */
export class MockChatProvider extends BaseChatProvider {
  readonly name = 'mock';
  readonly modelName: string;
  /** How many times `generate` was called. */
  generateCalls = 0;
  /** The arguments of the last `generate` call, with its effective generation options. */
  lastRequest:
    | { systemPrompt: string; tools: readonly Tool[]; history: readonly Message[]; generation: GenerationOptions }
    | undefined;
  private readonly log = new RequestLog();

  constructor(
    readonly parts: readonly StreamedMessagePart[],
    private readonly options: MockChatProviderOptions = {},
    thinkingEffort?: ThinkingEffort,
  ) {
    super({ thinkingEffort });
    this.modelName = options.modelName ?? 'mock';
  }

  generate(
    systemPrompt: string,
    tools: readonly Tool[],
    history: readonly Message[],
    options: ProviderGenerateOptions = {},
  ): Promise<StreamedMessage> {
    this.generateCalls++;
    let generation: GenerationOptions;
    try {
      generation = this.generationFor(tools, options);
    } catch (error) {
      return Promise.reject(error);
    }
    this.lastRequest = { systemPrompt, tools, history, generation };
    this.log.record({ systemPrompt, tools, history, generation, thinkingEffort: this.thinkingEffort, output: options.output });
    if (this.options.generateError !== undefined) return Promise.reject(this.options.generateError);
    const signal = this.options.onAbort === 'ignore' ? undefined : options.signal;
    if (signal?.aborted) return Promise.reject(signal.reason);
    const { id, usage, finishReason, traceId, delayMs, errorAfter } = this.options;
    return Promise.resolve(
      new PartsStream(this.parts, { id: id ?? 'mock', usage, finishReason, traceId, delayMs, errorAfter, signal }),
    );
  }

  /** What the recent `generate` calls asked for, oldest first (the last 1000). */
  get requests(): readonly RecordedRequest[] {
    return this.log.entries;
  }

  /** Copies (`withThinking`, `withGeneration`) start with no calls and a request log of their own. */
  protected override copyWith(changes: ProviderChanges): this {
    return super.copyWith({ log: new RequestLog(), generateCalls: 0, lastRequest: undefined, ...changes });
  }
}
