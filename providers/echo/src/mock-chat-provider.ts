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
    return Promise.resolve(new MockStream(this.parts, this.options, signal));
  }

  withThinking(effort: ThinkingEffort): MockChatProvider {
    return new MockChatProvider(this.parts, this.options, effort);
  }
}

class MockStream implements StreamedMessage {
  readonly id: string | undefined;
  readonly usage: TokenUsage | undefined;
  readonly finishReason: FinishReason | undefined;
  readonly traceId: string | undefined;

  constructor(
    private readonly parts: readonly StreamedMessagePart[],
    private readonly options: MockChatProviderOptions,
    private readonly signal: AbortSignal | undefined,
  ) {
    this.id = options.id ?? 'mock';
    this.usage = options.usage;
    this.finishReason = options.finishReason;
    this.traceId = options.traceId;
  }

  async *[Symbol.asyncIterator](): AsyncIterator<StreamedMessagePart> {
    const { delayMs, errorAfter } = this.options;
    const signal = this.signal;
    for (let i = 0; i < this.parts.length; i++) {
      if (errorAfter && i === errorAfter.parts) throw errorAfter.error;
      if (delayMs !== undefined) await delay(delayMs, signal);
      if (signal?.aborted) throw signal.reason;
      yield this.parts[i]!;
    }
    if (errorAfter && errorAfter.parts >= this.parts.length) throw errorAfter.error;
  }
}

function delay(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
