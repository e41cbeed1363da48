/**
 * One kosong request as the call options of an AI SDK model's `doStream`
 * (`LanguageModelV2/V3/V4CallOptions`): the prompt, the function tools, the neutral generation
 * options, structured output, thinking and the provider options.
 *
 * @module
 */
import type { LanguageModelV4CallOptions } from './spec-v4.js';
import {
  ChatProviderError,
  UnsupportedGenerationOptionError,
  type GenerationOptionName,
  type GenerationOptions,
  type OutputFormat,
  type ThinkingEffort,
  type ToolChoice,
} from '@kosong/core/provider-kit';
import type { JsonObject, Tool } from '@kosong/core';

import type { SpecificationVersion } from './language-model.js';
import type { Prompt } from './prompt.js';
import type { ProviderOptions } from './provider-metadata.js';
import type { SpecSettings } from './spec-settings.js';

/** What a call is made of, for {@link callOptions}. */
export interface CallInput {
  readonly version: SpecificationVersion;
  /** The bridge's name, for refusals. */
  readonly provider: string;
  /** The model's provider id (`openai.chat`) and its class, to find how it takes `parallelToolCalls`. */
  readonly sdkProvider: string;
  readonly modelClass: string | undefined;
  readonly prompt: Prompt;
  readonly tools: readonly Tool[];
  readonly generation: GenerationOptions;
  readonly output: OutputFormat | undefined;
  readonly thinkingEffort: ThinkingEffort | undefined;
  /** Provider options of the thinking effort, from the bridge's `thinking` option; `undefined` when it has none. */
  readonly thinkingOptions: ProviderOptions | undefined;
  readonly providerOptions: ProviderOptions | undefined;
  /** Call options of the spec that kosong has no neutral option for, as given. */
  readonly settings: SpecSettings | undefined;
  readonly headers: Readonly<Record<string, string>> | undefined;
  readonly abortSignal: AbortSignal;
}

/** The call options, and the neutral options it carries (which a warning of the model can refuse). */
export interface CallOptions {
  readonly options: LanguageModelV4CallOptions;
  /** The generation options set for this call, and `responseFormat` when structured output was asked for. */
  readonly asked: ReadonlySet<string>;
}

/**
 * The call options of one request:
 *
 * - `maxOutputTokens`, `temperature`, `topP`, `stopSequences`, `seed` as they are;
 * - `toolChoice` in the spec's terms (`{ type: 'tool', toolName }` for a named tool);
 * - `parallelToolCalls`, which the spec has no field for, as the provider option of the providers
 *   known to take one (OpenAI's and Groq's `parallelToolCalls`, Anthropic's `disableParallelToolUse`,
 *   an OpenAI-compatible endpoint's `parallel_tool_calls`); for any other, an
 *   `UnsupportedGenerationOptionError`;
 * - the tools as `function` tools with their JSON Schema;
 * - structured output as `responseFormat: { type: 'json', schema, name, description }`;
 * - the thinking effort: the bridge's `thinking` option when it has one (its provider options), else
 *   the `reasoning` field of a v4 model (`off` is `none`); for a v2 or v3 model without a `thinking`
 *   option, a `ChatProviderError` (those specs have no field for it);
 * - the provider options (the thinking's and `parallelToolCalls`'s merged under them, per provider);
 * - the spec's settings kosong has no neutral option for (`topK`, `presencePenalty`, `frequencyPenalty`), as given.
 *
 * @throws {UnsupportedGenerationOptionError} for `parallelToolCalls` with a provider not known to take it.
 * @throws {ChatProviderError} for a thinking effort a v2 or v3 model cannot be asked for.
 */
export function callOptions(input: CallInput): CallOptions {
  const { generation, tools, output } = input;
  const asked = new Set<string>();
  const options: { -readonly [K in keyof LanguageModelV4CallOptions]: LanguageModelV4CallOptions[K] } = {
    ...withoutUndefined(input.settings),
    prompt: input.prompt as LanguageModelV4CallOptions['prompt'],
    abortSignal: input.abortSignal,
  };
  const set = (name: GenerationOptionName): boolean => {
    if (generation[name] === undefined) return false;
    asked.add(name);
    return true;
  };
  if (set('maxOutputTokens')) options.maxOutputTokens = generation.maxOutputTokens!;
  if (set('temperature')) options.temperature = generation.temperature!;
  if (set('topP')) options.topP = generation.topP!;
  if (set('stopSequences')) options.stopSequences = [...generation.stopSequences!];
  if (set('seed')) options.seed = generation.seed!;
  if (set('toolChoice')) options.toolChoice = toolChoiceOf(generation.toolChoice!);
  if (tools.length > 0) options.tools = tools.map((tool) => ({ type: 'function', name: tool.name, description: tool.description, inputSchema: tool.parameters as JsonObject }));
  if (output !== undefined) {
    asked.add('responseFormat');
    options.responseFormat = { type: 'json', schema: output.schema as JsonObject, name: output.name, ...(output.description === undefined ? {} : { description: output.description }) };
  }
  let providerOptions = input.providerOptions;
  if (set('parallelToolCalls')) providerOptions = mergeOptions(parallelToolCallsOptions(input, generation.parallelToolCalls!), providerOptions);
  const effort = input.thinkingEffort;
  if (effort !== undefined) {
    if (input.thinkingOptions !== undefined) providerOptions = mergeOptions(input.thinkingOptions, providerOptions);
    else if (input.version === 'v4') options.reasoning = effort === 'off' ? 'none' : effort;
    else {
      throw new ChatProviderError(
        `Provider "${input.provider}": the model implements the language model spec ${input.version}, which has no field for a thinking effort; ` +
          "give aiSdkProvider a `thinking` option that maps the effort to the provider's options (e.g. { anthropic: { thinking: … } })",
      );
    }
  }
  if (providerOptions !== undefined) options.providerOptions = providerOptions as NonNullable<LanguageModelV4CallOptions['providerOptions']>;
  if (input.headers !== undefined) options.headers = { ...input.headers };
  return { options, asked };
}

function toolChoiceOf(choice: ToolChoice): NonNullable<LanguageModelV4CallOptions['toolChoice']> {
  return typeof choice === 'string' ? { type: choice } : { type: 'tool', toolName: choice.name };
}

/** The key of a model's options in `providerOptions`: the first segment of its provider id (`openai.chat` → `openai`). */
export function providerOptionsKey(sdkProvider: string): string {
  return sdkProvider.split('.', 1)[0]!;
}

function parallelToolCallsOptions(input: CallInput, parallel: boolean): ProviderOptions {
  const key = providerOptionsKey(input.sdkProvider);
  if (input.modelClass === 'OpenAICompatibleChatLanguageModel') return { [key]: { parallel_tool_calls: parallel } };
  switch (key) {
    case 'openai':
    case 'groq':
      return { [key]: { parallelToolCalls: parallel } };
    case 'anthropic':
      return { anthropic: { disableParallelToolUse: !parallel } };
    default:
      throw new UnsupportedGenerationOptionError(input.provider, 'parallelToolCalls', `the AI SDK spec has no field for it, and the bridge knows no provider option of ${JSON.stringify(input.sdkProvider)} for it`);
  }
}

/** `over` merged over `base`, per provider (a key of `over` wins). */
function mergeOptions(base: ProviderOptions, over: ProviderOptions | undefined): ProviderOptions {
  if (over === undefined) return base;
  const merged: Record<string, JsonObject> = { ...base };
  for (const [provider, values] of Object.entries(over)) merged[provider] = { ...merged[provider], ...values };
  return merged;
}

/** The settings that are set (an option set to `undefined` is not sent). */
function withoutUndefined(settings: SpecSettings | undefined): { readonly topK?: number; readonly presencePenalty?: number; readonly frequencyPenalty?: number } {
  if (settings === undefined) return {};
  return Object.fromEntries(Object.entries(settings).filter(([, value]) => value !== undefined));
}
