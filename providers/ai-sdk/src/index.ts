/**
 * `@kosong/provider-ai-sdk`: every AI SDK provider package as a kosong chat provider, with tools
 * still dispatched mid-stream.
 *
 * - {@link aiSdkProvider} / {@link AiSdkChatProvider}: any AI SDK language model (`LanguageModelV2`,
 *   `V3` or `V4` of `@ai-sdk/provider`) as a `ChatProvider`, on the model's `doStream`;
 * - {@link aiSdkPlugin}: a kernel plugin that registers one;
 * - {@link loadAiSdkModel}: a model named `<package>:<model-id>`, from the installed package;
 * - {@link providerPlugins}: the `ai-sdk` entry the `kosong` CLI offers (`--model <package>:<model-id>`).
 *
 * @packageDocumentation
 */
export { aiSdkProvider, AiSdkChatProvider, DEFAULT_AI_SDK_TIMEOUT_MS, type AiSdkProviderOptions, type ProviderOptionsCall } from './ai-sdk-provider.js';
export type { SpecSettings } from './spec-settings.js';
export { aiSdkPlugin, type AiSdkPluginOptions } from './ai-sdk-plugin.js';
export { AiSdkStream } from './ai-sdk-stream.js';
export type { AiSdkLanguageModel, SpecificationVersion } from './language-model.js';
export { REASONING_METADATA_PREFIX, TOOL_CALL_METADATA_KEY, type ProviderMetadata, type ProviderOptions } from './provider-metadata.js';
export { API_KEY_PATTERNS } from './convert-error.js';
export { loadAiSdkModel, parseModelSpec, type LoadModelOptions, type ModelSpec } from './model-loader.js';
export { aiSdkEnvironmentPlugin, AI_SDK_PROVIDER_NAME, providerPlugins, type AiSdkEnvironmentPluginOptions, type ProviderPluginEntry } from './provider-plugins.js';
