import { Kernel, definePlugin, textPart, toolCall, type ChatProvider, type GenerationOptions, type HookErrorReport, type KernelOptions, type Message, type StreamedMessage, type TokenUsage, type Tool } from '@kosong/core';
import { noGenerationOptions, type ProviderGenerateOptions } from '@kosong/core/provider-kit';

/** The price of {@link UsageProvider}'s model in the kernels of these tests (US dollars per million tokens). */
export const USAGE_PRICES = { 'usage/usage-model': { input: 3, output: 15 } } as const;

/**
 * A model whose steps report the usage given by `usageOf` (by its history's first text), after
 * `holdMs`, and make `calls` calls of a tool `work`; counts the requests running at once, and
 * refuses nothing.
 */
export class UsageProvider implements ChatProvider {
  readonly name = 'usage';
  readonly modelName = 'usage-model';
  readonly thinkingEffort = undefined;
  readonly generation: GenerationOptions = noGenerationOptions();
  active = 0;
  maxActive = 0;
  requests = 0;

  constructor(
    private readonly usageOf: (tag: string) => TokenUsage = () => ({ inputOther: 10, output: 2, inputCacheRead: 0, inputCacheCreation: 0 }),
    private readonly holdMs = 0,
    private readonly calls = 0,
  ) {}

  async generate(_systemPrompt: string, _tools: readonly Tool[], history: readonly Message[], options: ProviderGenerateOptions = {}): Promise<StreamedMessage> {
    this.requests++;
    this.active++;
    this.maxActive = Math.max(this.maxActive, this.active);
    const first = history[0]?.content[0];
    const tag = first?.type === 'text' ? first.text : '';
    try {
      if (this.holdMs > 0) await new Promise((resolve) => setTimeout(resolve, this.holdMs));
      options.signal?.throwIfAborted();
    } finally {
      this.active--;
    }
    const usage = this.usageOf(tag);
    const calls = Array.from({ length: this.calls }, (_, i) => toolCall(`${tag}-c${i}`, 'work', '{}'));
    return {
      id: `usage-${tag}`,
      usage,
      finishReason: 'stop',
      async *[Symbol.asyncIterator]() {
        yield textPart(`ok ${tag}`);
        yield* calls;
      },
    };
  }

  withThinking(): ChatProvider {
    return this;
  }

  withGeneration(): ChatProvider {
    return this;
  }
}

/** A kernel whose default provider is `provider`, its hook errors collected in `reports`. */
export async function governedKernel(provider: ChatProvider, options: KernelOptions, reports: HookErrorReport[] = []): Promise<Kernel> {
  const kernel = new Kernel({ prices: USAGE_PRICES, ...options });
  await kernel.use(definePlugin({ name: 'usage-provider', setup: (ctx) => ctx.bindChatProvider('usage', provider, { default: true }) }));
  await kernel.use(definePlugin({ name: 'sink', setup: (ctx) => ctx.bindHookErrorSink({ report: (r) => void reports.push(r) }) }));
  return kernel;
}

/** A history of one user message `tag`. */
export const historyOf = (tag: string): Message[] => [{ role: 'user', content: [textPart(tag)] }];
