import { inspect } from 'node:util';

import type { Message } from '../message/message.js';
import { generationForCall } from '../provider/call-generation.js';
import type { ChatProvider, ProviderGenerateOptions, StreamedMessage, ThinkingEffort } from '../provider/chat-provider.js';
import { noGenerationOptions, updateGenerationOptions, type GenerationOptions } from '../provider/generation-options.js';
import { scrubSecrets, type Secrets } from '../provider/secret-scrubbing.js';
import type { Tool } from '../tooling/tool.js';

/**
 * What {@link BaseChatProvider.copyWith} lays over a copy: the base's own fields (typed), and fields
 * of the subclass by name (its `private` fields included, which no type outside the class can name).
 */
export interface ProviderChanges {
  /** The copy's thinking effort. */
  readonly thinkingEffort?: ThinkingEffort | undefined;
  /** The copy's generation options (already checked: {@link BaseChatProvider.withGeneration} checks them). */
  readonly generation?: GenerationOptions;
  /** Any field of the subclass. */
  readonly [field: string]: unknown;
}

/** What a subclass may start with (a copy made by a constructor rather than by {@link BaseChatProvider.copyWith}). */
export interface ProviderState {
  /** The thinking effort; default none. */
  readonly thinkingEffort?: ThinkingEffort | undefined;
  /** Generation options already checked (e.g. another provider's `generation`); default none. */
  readonly generation?: GenerationOptions | undefined;
}

/**
 * The class plumbing every provider has, so that a provider class holds its wire mapping and
 * nothing else: the immutable `with…` copies, the generation options of a call, and what logs show.
 *
 * - {@link BaseChatProvider.withThinking} and {@link BaseChatProvider.withGeneration} return copies
 *   made by {@link BaseChatProvider.copyWith}: the copy has every field of this provider (sharing
 *   its HTTP client, say) with the changes laid over them. A subclass keeps its state in ordinary
 *   fields (TypeScript `private` / `readonly` ones, not `#private` ones, which a copy cannot have),
 *   and overrides {@link BaseChatProvider.thinkingChanges} to map an effort to its API's terms.
 * - {@link BaseChatProvider.generationFor} gives the options `generate` honours: the ones core
 *   resolved for the call, without resolving them again.
 * - {@link BaseChatProvider.toJSON} and `util.inspect` show the name, the model, what
 *   {@link BaseChatProvider.describe} adds (a base URL) and the thinking effort: never a field that
 *   holds a key, and with every secret {@link BaseChatProvider.secrets} names redacted from what they
 *   show (a base URL with credentials in it, say).
 *
 * @example
 * class MyProvider extends BaseChatProvider {
 *   readonly name = 'my-api';
 *   constructor(readonly modelName: string, private readonly connection: MyConnection) { super(); }
 *   async generate(systemPrompt, tools, history, options = {}) {
 *     const generation = this.generationFor(tools, options);
 *     return this.connection.open(requestBody(this.modelName, systemPrompt, tools, history, generation), options.signal);
 *   }
 *   protected override secrets() { return this.connection.secrets(); }
 * }
 */
export abstract class BaseChatProvider implements ChatProvider {
  /** The provider's id, e.g. `openai`. */
  abstract readonly name: string;
  /** The model this provider calls. */
  abstract readonly modelName: string;
  /** The thinking effort set with {@link BaseChatProvider.withThinking}, as the provider keeps it (see {@link BaseChatProvider.thinkingChanges}). */
  readonly thinkingEffort: ThinkingEffort | undefined;
  /** The generation options set with {@link BaseChatProvider.withGeneration} (frozen; empty when none were set). */
  readonly generation: GenerationOptions;

  constructor(state: ProviderState = {}) {
    this.thinkingEffort = state.thinkingEffort;
    this.generation = state.generation ?? noGenerationOptions();
  }

  /** Starts one generation and returns its stream (see `ChatProvider.generate`). */
  abstract generate(systemPrompt: string, tools: readonly Tool[], history: readonly Message[], options?: ProviderGenerateOptions): Promise<StreamedMessage>;

  /** A copy that thinks with this effort, as {@link BaseChatProvider.thinkingChanges} maps it. */
  withThinking(effort: ThinkingEffort): this {
    return this.copyWith(this.thinkingChanges(effort));
  }

  /**
   * A copy whose generation options are `options` merged over its own, field by field.
   *
   * @throws {InvalidGenerationOptionError} for a bad value, naming the provider.
   */
  withGeneration(options: GenerationOptions): this {
    return this.copyWith({ generation: updateGenerationOptions(this.generation, options, this.name) });
  }

  /** What {@link BaseChatProvider.withThinking} changes: by default the effort as it is given. */
  protected thinkingChanges(effort: ThinkingEffort): ProviderChanges {
    return { thinkingEffort: effort };
  }

  /**
   * A copy of this provider: same class, every own field of this one, `changes` laid over them. A
   * subclass whose copies need state of their own (a fresh request log, say) overrides this and adds
   * it to the changes.
   */
  protected copyWith(changes: ProviderChanges): this {
    return Object.assign(Object.create(Object.getPrototypeOf(this) as object) as this, this, changes);
  }

  /**
   * The generation options a `generate` call honours: the ones core resolved for the call
   * (`options.resolvedGeneration`), or, for a call that did not come through core, this provider's
   * own with `options.generation` merged over them and checked (see `generationForCall`).
   *
   * @throws {InvalidGenerationOptionError} when it resolves them itself and an option is bad.
   */
  protected generationFor(tools: readonly Tool[], options: ProviderGenerateOptions | undefined): GenerationOptions {
    return generationForCall(this, tools, options);
  }

  /** The secrets this provider holds (API keys, credential-like headers): redacted from {@link BaseChatProvider.toJSON}. Default none. */
  protected secrets(): Secrets {
    return [];
  }

  /** Fields {@link BaseChatProvider.toJSON} shows besides the name, the model and the thinking effort (e.g. `baseURL`). */
  protected describe(): Readonly<Record<string, unknown>> {
    return {};
  }

  /** What logs and `JSON.stringify` show: `name`, `modelName`, {@link BaseChatProvider.describe}, `thinkingEffort`; never a secret. */
  toJSON(): Record<string, unknown> {
    return scrubSecrets({ name: this.name, modelName: this.modelName, ...this.describe(), thinkingEffort: this.thinkingEffort }, this.secrets());
  }

  /** How `util.inspect` (and so `console.log`) shows the provider: its class name and {@link BaseChatProvider.toJSON}. */
  [inspect.custom](): string {
    return `${this.constructor.name} ${inspect(this.toJSON())}`;
  }
}
