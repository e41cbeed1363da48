/**
 * `node examples/lib/class-plugin.js`: a plugin written as classes, offline.
 *
 * - `UsageMeter` is a hooks class: the container creates it, injecting the clock and the usage store
 *   the plugin bound; it counts every step's tokens per tenant.
 * - `TenantModel` is a provider class bound once, for tenants only: each tenant's module binds its own
 *   API key, and each tenant gets its own instance with that key (no global key anywhere).
 * - `@postConstruct` and `@preDestroy` show the lifecycles: created when the plugin is used (or the
 *   tenant defined), destroyed in reverse order when the tenant is removed or the kernel disposed.
 *
 * A real provider class would hand the key to its SDK; this one only shows it, masked, in its reply.
 */
import {
  Kernel,
  definePlugin,
  textPart,
  tokenUsage,
  type ChatProvider,
  type GenerationOptions,
  type Message,
  type StepEndEvent,
  type StepHooks,
  type StreamedMessage,
  type ThinkingEffort,
  type Tool,
} from '@kosong/core';
import { inject, injectable, postConstruct, preDestroy } from '@kosong/core/kernel';
import type { ProviderGenerateOptions } from '@kosong/core/provider-kit';
import { MockChatProvider } from '@kosong/provider-echo';

/** Service identifiers: a symbol and an interface (or type) of the same name. */
const Clock = Symbol('Clock');
interface Clock {
  now(): Date;
}
const UsageStore = Symbol('UsageStore');
const ApiKey = Symbol('ApiKey');
type ApiKey = string;

/** Tokens per tenant, kept for as long as the kernel lives. */
@injectable()
class InMemoryUsageStore {
  readonly #tokens = new Map<string, number>();

  add(tenant: string | undefined, tokens: number): void {
    const key = tenant ?? '(none)';
    this.#tokens.set(key, (this.#tokens.get(key) ?? 0) + tokens);
  }

  report(): string {
    return [...this.#tokens].map(([tenant, tokens]) => `${tenant}: ${tokens} tokens`).join(', ');
  }

  @preDestroy()
  close(): void {
    console.log(`usage store closed (${this.report()})`);
  }
}

/** The hooks: one instance for the kernel, shared by every tenant (it injects nothing per tenant). */
@injectable()
class UsageMeter implements StepHooks {
  constructor(
    @inject(Clock) private readonly clock: Clock,
    @inject(UsageStore) private readonly store: InMemoryUsageStore,
  ) {}

  onStepEnd(event: StepEndEvent): void {
    const tokens = (event.usage?.inputOther ?? 0) + (event.usage?.output ?? 0);
    this.store.add(event.tenant, tokens);
    console.log(`${this.clock.now().toISOString()} ${event.tenant}: ${tokens} tokens`);
  }
}

/** A provider created per tenant, with the tenant's key. */
@injectable()
class TenantModel implements ChatProvider {
  readonly name = 'tenant-model';
  readonly thinkingEffort = undefined;
  readonly generation: GenerationOptions = {};
  readonly #model: MockChatProvider;

  constructor(@inject(ApiKey) private readonly apiKey: ApiKey) {
    const masked = `${'*'.repeat(4)}${apiKey.slice(-4)}`;
    this.#model = new MockChatProvider([textPart(`Hello, this is your model (key ${masked}).`)], {
      usage: tokenUsage({ inputOther: 12, output: 8 }),
    });
  }

  get modelName(): string {
    return this.#model.modelName;
  }

  @postConstruct()
  connect(): void {
    console.log(`model for key …${this.apiKey.slice(-4)} ready`);
  }

  @preDestroy()
  disconnect(): void {
    console.log(`model for key …${this.apiKey.slice(-4)} closed`);
  }

  generate(systemPrompt: string, tools: readonly Tool[], history: readonly Message[], options?: ProviderGenerateOptions): Promise<StreamedMessage> {
    return this.#model.generate(systemPrompt, tools, history, options);
  }

  withThinking(effort: ThinkingEffort): ChatProvider {
    return this.#model.withThinking(effort);
  }

  withGeneration(options: GenerationOptions): ChatProvider {
    return this.#model.withGeneration(options);
  }
}

/** The plugin: its own services, then its contributions to the kernel's extension points. */
const metering = definePlugin({
  name: 'metering',
  setup(ctx) {
    ctx.bind<Clock>(Clock).toConstantValue({ now: () => new Date('2026-01-01T00:00:00Z') });
    ctx.bind(UsageStore).to(InMemoryUsageStore).inSingletonScope();
    ctx.bindHooks(UsageMeter);
    ctx.bindChatProvider('tenant-model', TenantModel, { tenantOnly: true });
  },
});

const kernel = new Kernel();
await kernel.use(metering);
kernel.tenants.define('acme', { module: (ctx) => ctx.bind(ApiKey).toConstantValue('sk-acme-1111') });
kernel.tenants.define('globex', { module: (ctx) => ctx.bind(ApiKey).toConstantValue('sk-globex-2222') });

const history = [{ role: 'user' as const, content: [textPart('Hi!')] }];
for (const tenant of ['acme', 'globex', 'acme']) {
  const result = await kernel.runner({ tenant }).step({ systemPrompt: 'Be brief.', history });
  const text = result.message.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
  console.log(`${tenant} got: ${text}`);
}

await kernel.tenants.remove('globex');
await kernel.dispose();
