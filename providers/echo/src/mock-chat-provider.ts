import type {
  ChatProvider,
  FinishReason,
  Message,
  ProviderGenerateOptions,
  StreamedMessage,
  StreamedMessagePart,
  ThinkingEffort,
  TokenUsage,
  Tool,
} from '@kosong/core';

import { PartsStream } from './parts-stream.js';

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
 */
export class MockChatProvider implements ChatProvider {
  readonly name = 'mock';
  readonly modelName: string;
  readonly thinkingEffort: ThinkingEffort | undefined;
  /** How many times `generate` was called. */
  generateCalls = 0;
  /** The arguments of the last `generate` call. */
  lastRequest: { systemPrompt: string; tools: readonly Tool[]; history: readonly Message[] } | undefined;

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
    this.lastRequest = { systemPrompt, tools, history };
    if (this.options.generateError !== undefined) return Promise.reject(this.options.generateError);
    const signal = this.options.onAbort === 'ignore' ? undefined : options.signal;
    if (signal?.aborted) return Promise.reject(signal.reason);
    const { id, usage, finishReason, traceId, delayMs, errorAfter } = this.options;
    return Promise.resolve(
      new PartsStream(this.parts, { id: id ?? 'mock', usage, finishReason, traceId, delayMs, errorAfter, signal }),
    );
  }

  withThinking(effort: ThinkingEffort): MockChatProvider {
    return new MockChatProvider(this.parts, this.options, effort);
  }
}
