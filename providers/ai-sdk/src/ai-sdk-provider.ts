import type { Message, Tool } from '@kosong/core';
import {
  BaseChatProvider,
  checkKnownOptions,
  credentialHeaderValues,
  type KnownOptions,
  type GenerationOptions,
  type ProviderGenerateOptions,
  type Secrets,
  type SdkErrorConverter,
  type ThinkingEffort,
} from '@kosong/core/provider-kit';

import { AiSdkStream, timeoutError } from './ai-sdk-stream.js';
import { callOptions } from './call-options.js';
import { aiSdkErrorConverter, environmentSecrets, modelSecrets, withSecrets } from './convert-error.js';
import type { AiSdkLanguageModel, SpecificationVersion } from './language-model.js';
import { PartConverter } from './part-converter.js';
import { SilenceWatchdog } from './silence-watchdog.js';
import { toPrompt } from './prompt.js';
import type { ProviderOptions } from './provider-metadata.js';
import { specifiedModel, type SpecifiedModel } from './specified-model.js';
import type { SpecSettings } from './spec-settings.js';

/** The default of {@link AiSdkProviderOptions.timeoutMs}: 10 minutes, as the official SDKs wait. */
export const DEFAULT_AI_SDK_TIMEOUT_MS = 600_000;

/** What a function given as {@link AiSdkProviderOptions.providerOptions} is told about the call. */
export interface ProviderOptionsCall {
  readonly systemPrompt: string;
  readonly tools: readonly Tool[];
  readonly history: readonly Message[];
  /** The generation options of the call (merged and checked). */
  readonly generation: GenerationOptions;
  readonly thinkingEffort: ThinkingEffort | undefined;
}

const PROVIDER_OPTIONS: KnownOptions<AiSdkProviderOptions> = {
  name: true,
  providerOptions: true,
  thinking: true,
  settings: true,
  headers: true,
  timeoutMs: true,
  secrets: true,
  env: true,
};

const SETTINGS: KnownOptions<SpecSettings> = { topK: true, presencePenalty: true, frequencyPenalty: true };

/** Options of {@link aiSdkProvider}. An option it does not know is a `TypeError`. */
export interface AiSdkProviderOptions {
  /** The provider's name (`ChatProvider.name`: errors, hooks and telemetry name it); default `ai-sdk`. */
  readonly name?: string;
  /**
   * The AI SDK `providerOptions` of every call (e.g. `{ openai: { reasoningSummary: 'auto' } }`,
   * `{ anthropic: { cacheControl: … } }`), passed through as they are; or a function that gives them
   * for each call.
   */
  readonly providerOptions?: ProviderOptions | ((call: ProviderOptionsCall) => ProviderOptions | undefined);
  /**
   * The provider options that ask the model for a thinking effort (set with `withThinking`), e.g.
   * `(effort) => ({ anthropic: { thinking: { type: 'enabled', budgetTokens: 4096 } } })`. Without it, a
   * v4 model is asked with the spec's `reasoning` field (`off` as `none`), and a v2 or v3 model, whose
   * specs have no such field, refuses a thinking effort.
   */
  readonly thinking?: (effort: ThinkingEffort) => ProviderOptions;
  /**
   * Call options of the AI SDK spec that kosong has no neutral option for (`topK`,
   * `presencePenalty`, `frequencyPenalty`), sent with every call as they are.
   */
  readonly settings?: SpecSettings;
  /** HTTP headers of every call (the model's own are sent too). Credential-like ones are redacted from errors. */
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * The longest silence of the model, in ms: waiting for the stream to start, or for its next part;
   * then the request is aborted and the call fails with an `APITimeoutError`. Checked every
   * `timeoutMs`, so it fires after 1 to 2 × `timeoutMs` of silence. Default 10 minutes.
   */
  readonly timeoutMs?: number;
  /**
   * Secrets to keep out of errors besides those the bridge finds itself (the key the model sends,
   * found in the headers the provider package gives it; the values of the environment's credential
   * variables; keys of the known forms).
   */
  readonly secrets?: readonly string[];
  /** Where the credential variables whose values are redacted from errors are read; default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/**
 * Any AI SDK language model as a kosong `ChatProvider`: see {@link aiSdkProvider}. It calls the
 * model's `doStream` directly (no `ai` runtime in the path) and maps its stream part by part, so
 * that `step()` dispatches each tool call as soon as its input is complete, while the model is
 * still streaming.
 */
export class AiSdkChatProvider extends BaseChatProvider {
  readonly name: string;
  readonly modelName: string;
  /** The model, as it was given. */
  readonly model: AiSdkLanguageModel;
  private readonly specified: SpecifiedModel;
  private readonly providerOptions: AiSdkProviderOptions['providerOptions'];
  private readonly thinkingOptions: AiSdkProviderOptions['thinking'];
  private readonly settings: SpecSettings | undefined;
  private readonly headers: Readonly<Record<string, string>> | undefined;
  private readonly timeoutMs: number;
  private readonly givenSecrets: readonly string[];
  private readonly env: Readonly<Record<string, string | undefined>>;
  private readonly convert: SdkErrorConverter;

  constructor(model: AiSdkLanguageModel, options: AiSdkProviderOptions = {}) {
    super();
    checkKnownOptions('aiSdkProvider', options, PROVIDER_OPTIONS);
    if (options.settings !== undefined) checkKnownOptions('aiSdkProvider settings', options.settings, SETTINGS);
    this.specified = specifiedModel(model);
    this.model = model;
    this.name = options.name ?? 'ai-sdk';
    this.modelName = model.modelId;
    this.providerOptions = options.providerOptions;
    this.thinkingOptions = options.thinking;
    this.settings = options.settings;
    this.headers = options.headers;
    this.timeoutMs = Math.min(options.timeoutMs ?? DEFAULT_AI_SDK_TIMEOUT_MS, 2 ** 31 - 1);
    this.givenSecrets = options.secrets ?? [];
    this.env = options.env ?? process.env;
    this.convert = aiSdkErrorConverter(this.name);
  }

  /** The spec the model implements: `v2`, `v3` or `v4`. */
  get specificationVersion(): SpecificationVersion {
    return this.specified.version;
  }

  /** A copy whose provider options are these (replacing those it had). */
  withProviderOptions(providerOptions: AiSdkProviderOptions['providerOptions']): this {
    return this.copyWith({ providerOptions });
  }

  /**
   * Starts one generation: the model's `doStream` with the call's prompt, tools and options (see
   * `toPrompt` and `callOptions`), its stream read as kosong parts. Rejects with the signal's reason
   * on abort, an `APITimeoutError` when the model does not start streaming in time, and the
   * `ChatProviderError` of what the model threw.
   */
  async generate(systemPrompt: string, tools: readonly Tool[], history: readonly Message[], options: ProviderGenerateOptions = {}): Promise<AiSdkStream> {
    const { signal } = options;
    signal?.throwIfAborted();
    const generation = this.generationFor(tools, options);
    const { version, model } = this.specified;
    const request = new AbortController();
    const { options: call, asked } = callOptions({
      version,
      provider: this.name,
      sdkProvider: model.provider,
      modelClass: (model as { constructor?: { name?: string } }).constructor?.name,
      prompt: toPrompt(version, systemPrompt, history),
      tools,
      generation,
      output: options.output,
      thinkingEffort: this.thinkingEffort,
      thinkingOptions: this.thinkingEffort === undefined ? undefined : this.thinkingOptions?.(this.thinkingEffort),
      providerOptions: typeof this.providerOptions === 'function' ? this.providerOptions({ systemPrompt, tools, history, generation, thinkingEffort: this.thinkingEffort }) : this.providerOptions,
      settings: this.settings,
      headers: this.headers,
      abortSignal: request.signal,
    });
    const onAbort = (): void => request.abort(signal!.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    const release = (): void => signal?.removeEventListener('abort', onAbort);
    const timer = new SilenceWatchdog(this.timeoutMs, () => request.abort(timeoutError(this.timeoutMs)));
    let result: { readonly stream: ReadableStream<unknown>; readonly response?: { readonly headers?: Readonly<Record<string, string | undefined>> } };
    timer.waiting = true;
    try {
      // every spec's call options are the v4 ones but for the fields the bridge sets only for v4 (`reasoning`)
      result = await untilAborted<typeof result>(model.doStream(call as never), request.signal);
    } catch (error) {
      timer.stop();
      release();
      throw signal?.aborted ? signal.reason : timer.fired ? timeoutError(this.timeoutMs) : await this.convertError(error);
    } finally {
      timer.waiting = false;
      timer.received();
    }
    return new AiSdkStream({
      stream: result.stream,
      signal,
      request,
      release,
      timer,
      converter: new PartConverter(this.name, asked),
      convertError: (error) => this.convertError(error),
      traceId: headerOf(result.response?.headers, 'x-trace-id'),
    });
  }

  /** The error to throw for what the model threw: converted, with no secret the bridge knows of reachable from it. */
  private async convertError(error: unknown): Promise<unknown> {
    return this.convert(error, withSecrets(this.secrets(), await modelSecrets(this.model, this.env)));
  }

  protected override secrets(): Secrets {
    return [...this.givenSecrets, ...credentialHeaderValues(this.headers), ...environmentSecrets(this.env)];
  }

  protected override describe(): Readonly<Record<string, unknown>> {
    return { sdkProvider: this.model.provider, specificationVersion: this.specified.version };
  }
}

/**
 * Any AI SDK language model — of the `LanguageModelV2`, `V3` or `V4` spec of `@ai-sdk/provider`,
 * the version read from its `specificationVersion` — as a kosong `ChatProvider`:
 *
 * ```ts
 * import { mistral } from '@ai-sdk/mistral';
 * const provider = aiSdkProvider(mistral('mistral-large-latest'));
 * const result = await step({ provider, systemPrompt, toolset, history });
 * ```
 *
 * The history, the system prompt, the tools (JSON Schema), tool results (in call order) and media go
 * to the model in the spec's terms; its stream comes back as kosong parts, tool calls streaming as
 * tool-call parts, reasoning with the provider metadata that must go back on the next step (signed
 * or encrypted reasoning survives it); the generation options, `toolChoice`, structured output
 * (`responseFormat` with the JSON Schema) and the `providerOptions` of the options go with every
 * call; the SDK's errors become the `ChatProviderError` family; aborting the step's signal aborts
 * the call. What does not map is listed in the package's README ("Mapping gaps").
 *
 * @throws {ChatProviderError} for what is not a language model of spec v2, v3 or v4.
 */
export function aiSdkProvider(model: AiSdkLanguageModel, options: AiSdkProviderOptions = {}): AiSdkChatProvider {
  return new AiSdkChatProvider(model, options);
}

/** `promise`, or a rejection with the signal's reason as soon as it aborts (a model that does not watch its signal cannot hold the call). */
function untilAborted<T>(promise: PromiseLike<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    Promise.resolve(promise).then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        if (signal.aborted) void (value as { stream?: ReadableStream }).stream?.cancel().catch(() => undefined);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

function headerOf(headers: Readonly<Record<string, string | undefined>> | undefined, name: string): string | undefined {
  if (headers === undefined) return undefined;
  return headers[name] ?? Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1];
}
