import type { Message } from '../message/message.js';
import type { StreamedMessagePart } from '../message/parts.js';
import type { Tool } from '../tooling/tool.js';
import type { GenerationOptions } from './generation-options.js';
import type { OutputFormat } from './output-format.js';
import type { TokenUsage } from './token-usage.js';

/**
 * The generation options of one call as core resolved them: the provider's own options with the
 * call's merged over them, checked, with `toolChoice` checked against the request's tools. What they
 * were resolved from is kept, so that a provider can tell whether they are its own: a wrapper that
 * hands the options on to another provider (with options of its own, or other tools) must not make
 * that one use them.
 */
export interface ResolvedGeneration {
  /** The options the provider honours for this call (frozen). */
  readonly options: GenerationOptions;
  /** The provider's own options they were resolved from: `provider.generation`, compared by identity. */
  readonly configured: GenerationOptions;
  /** The tools `toolChoice` was checked against: the request's `tools`, compared by identity. */
  readonly tools: readonly Tool[];
}

/**
 * How hard the model should think. Providers map it to their own knobs and clamp levels they lack
 * (e.g. OpenAI maps `max` to `xhigh`); `off` disables thinking where that is possible.
 */
export type ThinkingEffort = 'off' | 'low' | 'medium' | 'high' | 'xhigh' | 'max';

/**
 * Why the model stopped, normalised across providers:
 * `stop` (natural end), `tool_calls`, `length` (output token budget exhausted: the response is cut off),
 * `content_filter` (the provider stopped the response), `other` (anything else the provider said).
 */
export type FinishReason = 'stop' | 'tool_calls' | 'length' | 'content_filter' | 'other';

/** A model a call can go to: its provider's name and the model's. */
export interface ModelIdentity {
  readonly provider: string;
  readonly model: string;
}

/**
 * A provider that hands one call from model to model (a fallback) moved it on: `from` failed (or
 * was skipped) before any part of its response was delivered, and `to` is asked next.
 */
export interface ProviderSwitch {
  readonly from: ModelIdentity;
  readonly to: ModelIdentity;
  /** Why, in the provider's words (the fallback's: `error` or `circuit-open`). */
  readonly reason: string;
  /** The error of `from`, if it failed. */
  readonly error: unknown;
}

/** Options of one {@link ChatProvider.generate} call. */
export interface ProviderGenerateOptions {
  /** Aborting cancels the request; the stream must then end promptly with the signal's reason. */
  readonly signal?: AbortSignal | undefined;
  /**
   * Generation options of this call, merged over the provider's own ({@link ChatProvider.generation})
   * field by field: per-call values win. The provider refuses an option it cannot honour with an
   * `UnsupportedGenerationOptionError` and a bad value with an `InvalidGenerationOptionError`.
   */
  readonly generation?: GenerationOptions | undefined;
  /**
   * The generation options of this call already resolved: set by core (`generate`, `step`, the
   * kernel's runners and the agent loop), which merges `generation` over `provider.generation` and
   * checks the result before it calls the provider. A provider reads it with `generationForCall`
   * (`@kosong/core/provider-kit`) instead of resolving the options again; a provider that does not
   * know this field ignores it and resolves `generation` itself, as before. Core sets it as a
   * property that is not enumerable, so that the options enumerate, serialise and compare as they
   * did before it existed; a copy made with a spread leaves it out. A caller that sets it vouches
   * that `options` is what `generation` resolves to for `configured` and `tools`.
   */
  readonly resolvedGeneration?: ResolvedGeneration | undefined;
  /**
   * Structured output: the model must answer with one JSON text matching this schema. The provider
   * asks for it with its API's native feature, or refuses with an `UnsupportedOutputError` (before
   * any request). The runtime parses and validates the text; the provider only asks.
   */
  readonly output?: OutputFormat | undefined;
  /**
   * Where a provider that moves this call to another model (a fallback) says so, once per model it
   * passes over, before it asks the next: the step hands it to its hooks' `onProviderSwitch`. Set by
   * core only when a hook listens, as a property that is not enumerable (like
   * `resolvedGeneration`); a wrapper hands it on with the options. It never throws.
   */
  readonly onProviderSwitch?: ((change: ProviderSwitch) => void) | undefined;
}

/**
 * A model response as it streams. Iterate it once. `id`, `usage` and `finishReason` are final only
 * after the stream is consumed.
 */
export interface StreamedMessage extends AsyncIterable<StreamedMessagePart> {
  /** The provider's id of the message, if it gives one. */
  readonly id: string | undefined;
  /** Token usage, if the provider reports it. */
  readonly usage: TokenUsage | undefined;
  /** The provider's trace id (e.g. the `x-trace-id` response header), available before iterating. */
  readonly traceId?: string | undefined;
  /** Why the model stopped, if the provider says. */
  readonly finishReason?: FinishReason | undefined;
}

/**
 * A chat model behind some API. Providers are immutable: `withThinking` and `withGeneration` return
 * configured copies.
 *
 * `generate` rejects with a {@link ChatProviderError} (`APIConnectionError`, `APITimeoutError`,
 * `APIStatusError`, …) when the request fails, and the returned stream throws one when the
 * response breaks off mid-way.
 */
export interface ChatProvider {
  /** The provider's id, e.g. `openai`, `kimi`, `mock`. */
  readonly name: string;
  /** The model this provider calls. */
  readonly modelName: string;
  /** The thinking effort, if one was set with {@link ChatProvider.withThinking}. */
  readonly thinkingEffort: ThinkingEffort | undefined;
  /**
   * The generation options set with {@link ChatProvider.withGeneration} (empty when none were set),
   * as a read-only view. Per-call options are merged over these.
   */
  readonly generation: GenerationOptions;
  /** Starts one generation and returns its stream. */
  generate(
    systemPrompt: string,
    tools: readonly Tool[],
    history: readonly Message[],
    options?: ProviderGenerateOptions,
  ): Promise<StreamedMessage>;
  /** A copy of this provider configured with a thinking effort. */
  withThinking(effort: ThinkingEffort): ChatProvider;
  /**
   * A copy of this provider whose generation options are `options` merged over its own, field by
   * field (a field `options` sets wins; the others are kept). This provider is not changed.
   *
   * @throws {InvalidGenerationOptionError} for a bad value (checked here, at once). Options the
   * provider's API does not have are refused when it is called, with an `UnsupportedGenerationOptionError`.
   */
  withGeneration(options: GenerationOptions): ChatProvider;
}

/** Service identifier of {@link ChatProvider} in the kernel's container (bound by name). */
export const ChatProvider: unique symbol = Symbol.for('kosong.ChatProvider');
