import type { ChatProvider, GenerationOptions, Message, ProviderGenerateOptions, StreamedMessage, ThinkingEffort, Tool } from '@kosong/core';

/**
 * A provider that makes a fresh provider for each turn it serves: for scripted models (the demo)
 * on a `kosong worker`, where one kernel serves many turns, each of which should play the script
 * from its start. A turn is known by its last user message; a step with no assistant message after
 * it starts a turn.
 */
export class PerTurnProvider implements ChatProvider {
  readonly #turns = new WeakMap<Message, ChatProvider>();
  readonly #sample: ChatProvider;

  constructor(private readonly create: () => ChatProvider) {
    this.#sample = create();
  }

  get name(): string {
    return this.#sample.name;
  }

  get modelName(): string {
    return this.#sample.modelName;
  }

  get thinkingEffort(): ThinkingEffort | undefined {
    return this.#sample.thinkingEffort;
  }

  get generation(): GenerationOptions {
    return this.#sample.generation;
  }

  generate(systemPrompt: string, tools: readonly Tool[], history: readonly Message[], options?: ProviderGenerateOptions): Promise<StreamedMessage> {
    const user = history.findLast((m) => m.role === 'user');
    let provider = user ? this.#turns.get(user) : undefined;
    if (!provider) {
      provider = this.create();
      if (user) this.#turns.set(user, provider);
    }
    return provider.generate(systemPrompt, tools, history, options);
  }

  withThinking(effort: ThinkingEffort): ChatProvider {
    return new PerTurnProvider(() => this.create().withThinking(effort));
  }

  withGeneration(options: GenerationOptions): ChatProvider {
    return new PerTurnProvider(() => this.create().withGeneration(options));
  }
}
