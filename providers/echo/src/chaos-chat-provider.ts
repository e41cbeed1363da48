import type { Message, Tool } from '@kosong/core';
import {
  APIConnectionError,
  APIStatusError,
  APITimeoutError,
  generationForCall,
  type ChatProvider,
  type GenerationOptions,
  type ProviderGenerateOptions,
  type StreamedMessage,
  type ThinkingEffort,
} from '@kosong/core/provider-kit';

import { pickFault, resolveChaosConfig, type ChaosConfig, type ChaosFault, type ChaosSettings } from './chaos-config.js';
import { ChaosStream } from './chaos-stream.js';
import { RequestLog, type RecordedRequest } from './request-log.js';
import { deriveSeed, mulberry32 } from './seeded-random.js';

const STATUS_MESSAGES: Readonly<Record<'429' | '500' | '502' | '503', string>> = {
  '429': 'Rate limit exceeded',
  '500': 'Internal server error',
  '502': 'Bad gateway',
  '503': 'Service temporarily unavailable',
};

/**
 * Wraps any {@link ChatProvider} and injects faults at configured rates (see {@link ChaosConfig}),
 * to test retries and error handling offline:
 *
 * - `connection`, `timeout`, `429`, `500`, `502`, `503`: `generate` rejects with the matching
 *   provider error without calling the wrapped provider (the request "never arrived"; a scripted
 *   provider behind it keeps its script for the retry). A 429 carries `retryAfterSeconds`.
 * - `disconnect`: the wrapped provider is called, and its stream throws `APIConnectionError` after
 *   0–3 parts (at the end, if the response is shorter).
 * - tool-call corruption: a streamed tool call or fragment whose arguments end with `}` loses it.
 *
 * Deterministic: the fate of the n-th `generate` call depends only on the seed and n, not on
 * timing or on how far earlier streams were read. The same seed gives the same faults in every run.
 *
 * Generation options are the wrapped provider's: `withGeneration` wraps its copy, and per-call
 * options are passed on to it. Each call is recorded in {@link ChaosChatProvider.requests}, faulted
 * or not; a call with a bad option is refused before it draws a fate.
 */
export class ChaosChatProvider implements ChatProvider {
  /** The seed in use (the configured one, or the random one drawn when none was given). */
  readonly seed: number;
  private readonly settings: ChaosSettings;
  private callCount = 0;
  private readonly log = new RequestLog();

  /** @throws RangeError for an invalid config (see {@link ChaosConfig}). */
  constructor(
    /** The provider that does the real work. */
    readonly inner: ChatProvider,
    /** The config as given. */
    readonly config: ChaosConfig = {},
  ) {
    this.settings = resolveChaosConfig(config);
    this.seed = this.settings.seed;
  }

  /** The wrapped provider's name. */
  get name(): string {
    return this.inner.name;
  }

  /** `chaos(<inner model>)` while any fault probability is above 0; else the wrapped provider's. */
  get modelName(): string {
    const { errorProbability, corruptToolCallProbability } = this.settings;
    return errorProbability > 0 || corruptToolCallProbability > 0 ? `chaos(${this.inner.modelName})` : this.inner.modelName;
  }

  /** The wrapped provider's. */
  get thinkingEffort(): ThinkingEffort | undefined {
    return this.inner.thinkingEffort;
  }

  /** The wrapped provider's. */
  get generation(): GenerationOptions {
    return this.inner.generation;
  }

  /** What the recent `generate` calls asked for (injected faults included), oldest first (the last 1000). */
  get requests(): readonly RecordedRequest[] {
    return this.log.entries;
  }

  /** How many `generate` calls have drawn their fate so far. */
  get calls(): number {
    return this.callCount;
  }

  async generate(
    systemPrompt: string,
    tools: readonly Tool[],
    history: readonly Message[],
    options: ProviderGenerateOptions = {},
  ): Promise<StreamedMessage> {
    options.signal?.throwIfAborted();
    const generation = generationForCall(this, tools, options);
    this.log.record({ systemPrompt, tools, history, generation, thinkingEffort: this.thinkingEffort, output: options.output });
    const { settings } = this;
    const call = this.callCount++;
    const random = mulberry32(deriveSeed(settings.seed, call));
    const fault = pickFault(settings, random());
    const disconnectAfter = Math.floor(random() * 4);
    if (fault !== undefined && fault !== 'disconnect') {
      settings.onFault?.({ call, fault });
      throw this.faultError(fault, call);
    }

    const stream = await this.inner.generate(systemPrompt, tools, history, options);
    if (fault === undefined && settings.corruptToolCallProbability <= 0) return stream;
    return new ChaosStream(stream, {
      random,
      corruptToolCallProbability: settings.corruptToolCallProbability,
      disconnectAfter: fault === 'disconnect' ? disconnectAfter : undefined,
      disconnect: () => {
        settings.onFault?.({ call, fault: 'disconnect' });
        return new APIConnectionError('Connection lost mid-stream (injected by ChaosChatProvider)');
      },
      onCorrupt: () => settings.onFault?.({ call, fault: 'corrupt_tool_call' }),
    });
  }

  /**
   * Wraps the wrapped provider's copy, with the same config and seed. The copy starts its own
   * call count, so it replays the fault sequence from the start.
   */
  withThinking(effort: ThinkingEffort): ChaosChatProvider {
    return new ChaosChatProvider(this.inner.withThinking(effort), { ...this.config, seed: this.seed });
  }

  /** Wraps the wrapped provider's copy with these generation options, like {@link ChaosChatProvider.withThinking}. */
  withGeneration(options: GenerationOptions): ChaosChatProvider {
    return new ChaosChatProvider(this.inner.withGeneration(options), { ...this.config, seed: this.seed });
  }

  private faultError(fault: Exclude<ChaosFault, 'disconnect'>, call: number): Error {
    switch (fault) {
      case 'connection':
        return new APIConnectionError('Connection error (injected by ChaosChatProvider)');
      case 'timeout':
        return new APITimeoutError('Request timed out (injected by ChaosChatProvider)');
      default: {
        const retryAfterSeconds = fault === '429' ? this.settings.retryAfterSeconds : undefined;
        return new APIStatusError(Number(fault), `${STATUS_MESSAGES[fault]} (injected by ChaosChatProvider)`, {
          requestId: `chaos-${this.seed}-${call}`,
          retryAfterSeconds,
        });
      }
    }
  }
}
