import type { Message, Tool } from '@kosong/core';
import {
  BaseChatProvider,
  updateGenerationOptions,
  type ChatProvider,
  type GenerationOptions,
  type ProviderChanges,
  type ModelIdentity,
  type ProviderGenerateOptions,
  type ProviderSwitch,
  type StreamedMessage,
  type ThinkingEffort,
} from '@kosong/core/provider-kit';

import { AllModelsFailedError, type ModelFailure } from './errors.js';
import { notify, type BreakerState, type FallbackSwitchEvent } from './fallback-events.js';
import { resolvePolicy, type FallbackPolicy, type ResolvedPolicy } from './fallback-policy.js';
import { FallbackStream, type StartedStream } from './fallback-stream.js';
import { ModelBreaker, type CallOutcome } from './model-breaker.js';
import { modelRef, type ModelRef } from './model-ref.js';

/** One model of the chain and its breaker, as {@link FallbackChatProvider.status} reports them. */
export interface ModelStatus extends ModelRef {
  /** Its breaker's state (`closed` when the policy has no breakers). */
  readonly breaker: BreakerState;
  /** Whether a call made now would be let through to it (closed, or open with its cool-down over). */
  readonly available: boolean;
}

/**
 * A `ChatProvider` over a chain of models (`fallbackProvider([primary, secondary, …], policy)`): each
 * call asks the first model whose circuit breaker lets calls through, and moves on to the next one
 * when the request fails **before the model's first part** with an error that switches (by default
 * a retryable one: see {@link FallbackPolicy.shouldSwitch}).
 *
 * - **Never after the first part.** Once a model has delivered a part, the stream is that model's:
 *   a failure later is the caller's error (the step's), as it is; switching would have the next model
 *   start the answer again and repeat what was delivered. `onFailureAfterOutput` says when this
 *   happens. To know a model's first part, the call reads it before `generate` resolves.
 * - **Breakers.** Each model has a cockatiel circuit breaker ({@link FallbackPolicy.breaker}): after
 *   N failures in a row (errors that switch, before the first part) it opens and the model is skipped
 *   without a request for the cool-down; then one trial call is let through (half-open) while other
 *   calls skip the model: a success closes the breaker, a failure opens it again. The breakers belong
 *   to this provider: every step that uses it (and every copy made by `withThinking` or
 *   `withGeneration`) shares them.
 * - **`name` and `modelName`** are those of the model a call made now starts with: the first model
 *   whose breaker lets calls through (the primary when none does). They change as breakers open and
 *   close; a step's events carry the ones read when the step started. Which model served a call:
 *   the stream's `model` ({@link FallbackStream}) and the `onSwitch` events.
 * - **Errors.** An abort stops at once (the signal's reason, no switch, nothing counted). An error
 *   that does not switch (a bad request, an option the model lacks) is thrown as it is. When every
 *   model failed or was skipped: one {@link AllModelsFailedError} with each model's error.
 * - `withThinking` and `withGeneration` apply to every model of the chain; `toJSON` and `util.inspect`
 *   show each model as its own `toJSON` does (or its name and model only), with its breaker: no key.
 */
export class FallbackChatProvider extends BaseChatProvider {
  /** The models of the chain, in order. */
  private readonly models: readonly ChatProvider[];
  /** Each model's name, model and position, as read when the chain was made. */
  private readonly refs: readonly ModelRef[];
  /** Each model's breaker (shared with copies); `undefined` when the policy has none. */
  private readonly breakers: readonly ModelBreaker[] | undefined;
  private readonly policy: ResolvedPolicy;

  /**
   * @throws TypeError when `models` is not a non-empty array of chat providers, or the policy is not
   * valid (an unknown option, a value of the wrong type).
   */
  constructor(models: readonly ChatProvider[], policy: FallbackPolicy = {}) {
    super();
    if (!Array.isArray(models) || models.length === 0) throw new TypeError('fallbackProvider: the models must be a non-empty array of chat providers');
    models.forEach((model, index) => {
      if (!isChatProvider(model)) throw new TypeError(`fallbackProvider: models[${index}] is not a chat provider (it needs name, modelName, generate, withThinking, withGeneration)`);
    });
    this.policy = resolvePolicy(policy);
    this.models = Object.freeze([...models]);
    this.refs = Object.freeze(models.map((model, index) => modelRef(index, model)));
    const settings = this.policy.breaker;
    const { onBreakerChange, onListenerError } = this.policy;
    const onChange = onBreakerChange && ((event: Parameters<typeof onBreakerChange>[0]) => notify(onBreakerChange, event, 'onBreakerChange', onListenerError));
    this.breakers = settings && Object.freeze(this.refs.map((ref) => new ModelBreaker(ref, settings, onChange)));
  }

  /** The name of the model a call made now starts with (see the class). */
  get name(): string {
    return this.current.name;
  }

  /** The model a call made now starts with (see the class). */
  get modelName(): string {
    return this.current.modelName;
  }

  /** The model a call made now starts with: the first whose breaker lets calls through, or the primary when none does. */
  get current(): ChatProvider {
    const breakers = this.breakers;
    if (breakers === undefined) return this.models[0]!;
    const index = breakers.findIndex((breaker) => breaker.available);
    return this.models[index === -1 ? 0 : index]!;
  }

  /** Each model of the chain, in order, with its breaker's state now. */
  status(): readonly ModelStatus[] {
    return this.refs.map((ref, index) => {
      const breaker = this.breakers?.[index];
      return Object.freeze({ ...ref, breaker: breaker?.state ?? 'closed', available: breaker?.available ?? true });
    });
  }

  /**
   * Holds the breaker of the model at `index` open until the handle is disposed: the model is
   * skipped meanwhile (e.g. while it is being maintained). Shared by the copies, like the breakers.
   *
   * @throws RangeError for an index out of the chain; TypeError when the policy has no breakers.
   */
  isolate(index: number): { dispose(): void } {
    if (this.breakers === undefined) throw new TypeError('fallbackProvider: the policy has no breakers (breaker: false)');
    const breaker = this.breakers[index];
    if (!Number.isInteger(index) || breaker === undefined) throw new RangeError(`fallbackProvider: no model at index ${index} (the chain has ${this.models.length})`);
    return breaker.isolate();
  }

  /**
   * Asks the models in order (see the class) and resolves with the stream of the first that
   * delivers a first part (or ends without any).
   *
   * @throws the signal's reason on abort; a model's error that does not switch, as it is; an
   * {@link AllModelsFailedError} when every model failed or was skipped.
   */
  async generate(systemPrompt: string, tools: readonly Tool[], history: readonly Message[], options: ProviderGenerateOptions = {}): Promise<StreamedMessage> {
    const { signal } = options;
    signal?.throwIfAborted();
    const { models, refs, policy } = this;
    const failures: ModelFailure[] = [];
    for (let index = 0; index < models.length; index++) {
      const model = models[index]!;
      const ref = refs[index]!;
      // Each call hands on the caller's options as they are (the options core resolved included: a
      // model whose own generation options differ resolves them again, see `generationForCall`).
      const call = async (): Promise<StartedStream> => {
        const stream = await model.generate(systemPrompt, tools, history, options);
        const iterator = stream[Symbol.asyncIterator]();
        return { stream, iterator, first: await iterator.next() };
      };
      const outcome = await this.run(index, call, signal);
      if (outcome.kind === 'started') {
        return new FallbackStream(outcome.value, ref, Object.freeze([...failures]), signal, (error) =>
          notify(policy.onFailureAfterOutput, Object.freeze({ model: ref, error }), 'onFailureAfterOutput', policy.onListenerError),
        );
      }
      // An abort stops here: never a switch (the contract: the call rejects with the signal's reason).
      if (signal?.aborted) throw signal.reason;
      if (outcome.kind === 'failed' && !outcome.counts) throw outcome.error;
      failures.push(Object.freeze({ model: ref, error: outcome.error }));
      const next = refs[index + 1];
      if (next !== undefined) {
        const event: FallbackSwitchEvent = Object.freeze({ from: ref, to: next, reason: outcome.kind !== 'skipped' ? 'error' : outcome.error.breaker === 'retry-after' ? 'retry-after' : 'circuit-open', error: outcome.error });
        notify(policy.onSwitch, event, 'onSwitch', policy.onListenerError);
        // The step's hooks hear of it too (`onProviderSwitch`), when core asked.
        const change: ProviderSwitch = Object.freeze({ from: identity(ref), to: identity(next), reason: event.reason, error: event.error });
        notify(options.onProviderSwitch, change, 'onProviderSwitch', policy.onListenerError);
      }
    }
    throw new AllModelsFailedError(failures);
  }

  /** One call of the model at `index`, through its breaker when there are breakers. */
  private async run(index: number, call: () => Promise<StartedStream>, signal: AbortSignal | undefined): Promise<CallOutcome<StartedStream>> {
    const ref = this.refs[index]!;
    const switches = (error: unknown): boolean => this.policy.shouldSwitch(error, ref);
    const breaker = this.breakers?.[index];
    // The last model is asked even while it rests for a retry-after: its own error then reaches the caller, with its retry-after.
    if (breaker !== undefined) return breaker.run(call, switches, signal, index < this.models.length - 1);
    try {
      return { kind: 'started', value: await call() };
    } catch (error) {
      return { kind: 'failed', error, counts: signal?.aborted !== true && switches(error) };
    }
  }

  /** Every model of the chain thinks with this effort. */
  protected override thinkingChanges(effort: ThinkingEffort): ProviderChanges {
    return { thinkingEffort: effort, models: Object.freeze(this.models.map((model) => model.withThinking(effort))) };
  }

  /**
   * A copy whose models all have `options` merged over their own (each checks them), and whose own
   * generation options (what core merges a call's over) are `options` merged over this one's.
   *
   * @throws {InvalidGenerationOptionError} for a bad value.
   */
  override withGeneration(options: GenerationOptions): this {
    const generation = updateGenerationOptions(this.generation, options, 'fallback');
    return this.copyWith({ generation, models: Object.freeze(this.models.map((model) => model.withGeneration(options))) });
  }

  /** Each model as its own `toJSON` shows it (else its name and model only: a plain object's fields may hold a key), with its breaker. */
  protected override describe(): Record<string, unknown> {
    const status = this.status();
    return {
      models: this.models.map((model, index) => ({ ...summaryOf(model), breaker: status[index]!.breaker })),
    };
  }
}

/**
 * A provider over a chain of models that moves to the next one on a retryable error (or what
 * `policy.shouldSwitch` says) before the first part, never after it, with a circuit breaker per
 * model. See {@link FallbackChatProvider}.
 *
 * @example
 * const provider = fallbackProvider([openai, anthropic], {
 *   breaker: { consecutiveFailures: 3, halfOpenAfterMs: 30_000 },
 *   onSwitch: ({ from, to, error }) => log.warn({ from, to, error }, 'model fallback'),
 * });
 * @throws TypeError for an empty chain, something that is not a chat provider, or a policy that is not valid.
 */
export function fallbackProvider(models: readonly ChatProvider[], policy: FallbackPolicy = {}): FallbackChatProvider {
  return new FallbackChatProvider(models, policy);
}

function isChatProvider(value: unknown): value is ChatProvider {
  if (typeof value !== 'object' || value === null) return false;
  const provider = value as Partial<Record<keyof ChatProvider, unknown>>;
  return (
    typeof provider.name === 'string' &&
    typeof provider.modelName === 'string' &&
    typeof provider.generate === 'function' &&
    typeof provider.withThinking === 'function' &&
    typeof provider.withGeneration === 'function'
  );
}

/** What `toJSON` shows of one model: its own `toJSON` (a kit provider keeps keys out of it), else name and model. */
function summaryOf(model: ChatProvider): Record<string, unknown> {
  const toJSON = (model as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === 'function') {
    try {
      const shown: unknown = toJSON.call(model);
      if (typeof shown === 'object' && shown !== null) return { ...(shown as Record<string, unknown>) };
    } catch {
      // fall through: name and model only
    }
  }
  return { name: model.name, modelName: model.modelName };
}

/** How core's `ProviderSwitch` names a model of the chain. */
function identity(ref: ModelRef): ModelIdentity {
  return Object.freeze({ provider: ref.name, model: ref.modelName });
}
