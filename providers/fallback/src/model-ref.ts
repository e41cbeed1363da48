import type { ChatProvider } from '@kosong/core/provider-kit';

/** One model of a fallback chain, as events, errors and {@link FallbackChatProvider.status} name it. */
export interface ModelRef {
  /** Its position in the chain (0: the primary). */
  readonly index: number;
  /** Its provider's name (`provider.name`), e.g. `openai`. */
  readonly name: string;
  /** Its model (`provider.modelName`). */
  readonly modelName: string;
}

/** The frozen {@link ModelRef} of the model at `index`. */
export function modelRef(index: number, provider: Pick<ChatProvider, 'name' | 'modelName'>): ModelRef {
  return Object.freeze({ index, name: provider.name, modelName: provider.modelName });
}

/** `openai/gpt-4o`: how messages name a model. */
export function modelLabel(model: ModelRef): string {
  return `${model.name}/${model.modelName}`;
}
