/**
 * An AI SDK model with the spec it implements, typed with that spec's own types.
 *
 * @module
 */
import type { LanguageModelV2, LanguageModelV3 } from '@ai-sdk/provider';
import type { LanguageModelV4 } from './spec-v4.js';
import { ChatProviderError } from '@kosong/core/provider-kit';

import type { AiSdkLanguageModel } from './language-model.js';

/** A model with its spec known: the spec's own type. */
export type SpecifiedModel =
  | { readonly version: 'v4'; readonly model: LanguageModelV4 }
  | { readonly version: 'v3'; readonly model: LanguageModelV3 }
  | { readonly version: 'v2'; readonly model: LanguageModelV2 };

/**
 * The model with the spec it says it implements.
 *
 * @throws {ChatProviderError} for what is not a language model of spec v2, v3 or v4 (naming what it got).
 */
export function specifiedModel(model: AiSdkLanguageModel): SpecifiedModel {
  const candidate = model as Partial<AiSdkLanguageModel> | null | undefined;
  if (typeof candidate !== 'object' || candidate === null || typeof candidate.doStream !== 'function') {
    throw new ChatProviderError(`aiSdkProvider: expected an AI SDK language model (an object with doStream), got ${describe(model)}`);
  }
  const version = candidate.specificationVersion;
  switch (version) {
    case 'v4':
      return { version, model: model as unknown as LanguageModelV4 };
    case 'v3':
      return { version, model: model as unknown as LanguageModelV3 };
    case 'v2':
      return { version, model: model as unknown as LanguageModelV2 };
    default:
      throw new ChatProviderError(
        `aiSdkProvider: the model ${JSON.stringify(candidate.modelId)} of ${JSON.stringify(candidate.provider)} implements the language model spec ${JSON.stringify(version)}; ` +
          'the bridge takes v2, v3 and v4 (AI SDK 5, 6 and 7 provider packages)',
      );
  }
}

function describe(value: unknown): string {
  if (value === null || typeof value !== 'object') return String(value);
  return `an object with ${Object.keys(value).slice(0, 5).join(', ') || 'no keys'}`;
}
