import {
  noGenerationOptions,
  resolveGenerationOptions,
  updateGenerationOptions,
  type ChatProvider,
  type FinishReason,
  type GenerationOptions,
  type Message,
  type ProviderGenerateOptions,
  type StreamedMessage,
  type StreamedMessagePart,
  type ThinkingEffort,
  type TokenUsage,
  type Tool,
} from '@kosong/core';

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
export class MockChatProvider implements ChatProvider {
  readonly name = 'mock';
  readonly modelName: string;
  readonly thinkingEffort: ThinkingEffort | undefined;
  /** How many times `generate` was called. */
  generateCalls = 0;
  /** The arguments of the last `generate` call, with its effective generation options. */
  lastRequest:
    | { systemPrompt: string; tools: readonly Tool[]; history: readonly Message[]; generation: GenerationOptions }
    | undefined;
  private configured: GenerationOptions = noGenerationOptions();
  private readonly log = new RequestLog();

  constructor(
    readonly parts: readonly StreamedMessagePart[],
    private readonly options: MockChatProviderOptions = {},
    thinkingEffort?: ThinkingEffort,
  ) {
    this.modelName = options.modelName ?? 'mock';
    this.thinkingEffort = thinkingEffort;
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
      generation = resolveGenerationOptions(this.name, this.configured, options.generation, tools);
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

  /** The generation options set with {@link MockChatProvider.withGeneration}. */
  get generation(): GenerationOptions {
    return this.configured;
  }

  /** What the recent `generate` calls asked for, oldest first (the last 1000). */
  get requests(): readonly RecordedRequest[] {
    return this.log.entries;
  }

  /** A copy with the effort recorded (and its own request log). */
  withThinking(effort: ThinkingEffort): MockChatProvider {
    const copy = new MockChatProvider(this.parts, this.options, effort);
    copy.configured = this.configured;
    return copy;
  }

  /** A copy with these generation options merged over its own (and its own request log). */
  withGeneration(options: GenerationOptions): MockChatProvider {
    const copy = new MockChatProvider(this.parts, this.options, this.thinkingEffort);
    copy.configured = updateGenerationOptions(this.configured, options, this.name);
    return copy;
  }
}
