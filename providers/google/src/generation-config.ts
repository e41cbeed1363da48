import { UnsupportedGenerationOptionError, type GenerationOptions } from '@kosong/core';
import type { GenerateContentConfig } from '@google/genai';

/** The most stop sequences Gemini takes. */
export const MAX_STOP_SEQUENCES = 5;

/**
 * The request config with the provider-neutral generation options laid over the provider's own
 * `config`: a neutral option replaces the field it maps to.
 *
 * - `maxOutputTokens`, `temperature`, `topP`, `seed` → their `generationConfig` namesakes;
 * - `stopSequences` → `stopSequences` (`[]` removes it; more than 5 is an {@link UnsupportedGenerationOptionError});
 * - `toolChoice` → `toolConfig.functionCallingConfig`: `auto` → mode `AUTO`, `none` → `NONE`,
 *   `required` → `ANY`, a named tool → `ANY` with `allowedFunctionNames: [name]` (other
 *   `toolConfig` fields are kept). Without tools, `auto` and `none` send nothing: they mean nothing
 *   there (core refuses `required` and a named tool without tools);
 * - `parallelToolCalls`: Gemini has no switch for it. `true` is what it does anyway; `false` is an
 *   {@link UnsupportedGenerationOptionError}.
 */
export function layGenerationOptions(
  provider: string,
  own: Readonly<GenerateContentConfig>,
  neutral: GenerationOptions,
  hasTools: boolean,
): GenerateContentConfig {
  const config: GenerateContentConfig = { ...own };
  const { maxOutputTokens, temperature, topP, stopSequences, seed, toolChoice, parallelToolCalls } = neutral;
  if (parallelToolCalls === false) {
    throw new UnsupportedGenerationOptionError(provider, 'parallelToolCalls', 'Gemini cannot be kept from calling several functions at once');
  }
  if (maxOutputTokens !== undefined) config.maxOutputTokens = maxOutputTokens;
  if (temperature !== undefined) config.temperature = temperature;
  if (topP !== undefined) config.topP = topP;
  if (seed !== undefined) config.seed = seed;
  if (stopSequences !== undefined) {
    if (stopSequences.length > MAX_STOP_SEQUENCES) {
      throw new UnsupportedGenerationOptionError(provider, 'stopSequences', `at most ${MAX_STOP_SEQUENCES} sequences, got ${stopSequences.length}`);
    }
    if (stopSequences.length === 0) delete config.stopSequences;
    else config.stopSequences = [...stopSequences];
  }
  if (toolChoice !== undefined) {
    const { functionCallingConfig: _replaced, ...otherToolConfig } = own.toolConfig ?? {};
    if (!hasTools) {
      if (Object.keys(otherToolConfig).length === 0) delete config.toolConfig;
      else config.toolConfig = otherToolConfig;
    } else {
      const functionCallingConfig =
        typeof toolChoice === 'object'
          ? { mode: 'ANY', allowedFunctionNames: [toolChoice.name] }
          : { mode: toolChoice === 'auto' ? 'AUTO' : toolChoice === 'none' ? 'NONE' : 'ANY' };
      config.toolConfig = { ...otherToolConfig, functionCallingConfig } as NonNullable<GenerateContentConfig['toolConfig']>;
    }
  }
  return config;
}
