/**
 * Per-tenant API keys without global state, on the wire: one provider class bound once by a plugin,
 * each tenant's module binds its key, and every request the real OpenAI provider sends to a local
 * Chat Completions server carries the key of the tenant whose step sent it.
 */
import { Kernel, PluginError, definePlugin, textPart, type ChatProvider, type GenerationOptions, type Message, type StreamedMessage, type ThinkingEffort, type Tool } from '@kosong/core';
import type { ProviderGenerateOptions } from '@kosong/core/provider-kit';
import { OpenAIChatProvider } from '@kosong/provider-openai';
import { ChatCompletionsServer, textReply } from '@kosong/provider-openai/testing';
import { expect } from 'chai';
import { inject, injectable, postConstruct, preDestroy } from 'inversify';

const ApiKey = Symbol('ApiKey');
const BaseUrl = Symbol('BaseUrl');
const Lifecycle = Symbol('Lifecycle');

/** The real OpenAI provider, created by the container with the scope's key. */
@injectable()
class TenantOpenAIProvider implements ChatProvider {
  readonly name = 'tenant-openai';
  readonly thinkingEffort = undefined;
  readonly #provider: OpenAIChatProvider;

  constructor(
    @inject(ApiKey) private readonly apiKey: string,
    @inject(BaseUrl) baseURL: string,
    @inject(Lifecycle) private readonly lifecycle: string[],
  ) {
    this.#provider = new OpenAIChatProvider({ apiKey, baseURL, model: 'gpt-test' });
  }

  get modelName(): string {
    return this.#provider.modelName;
  }

  get generation(): GenerationOptions {
    return this.#provider.generation;
  }

  generate(systemPrompt: string, tools: readonly Tool[], history: readonly Message[], options?: ProviderGenerateOptions): Promise<StreamedMessage> {
    return this.#provider.generate(systemPrompt, tools, history, options);
  }

  withThinking(effort: ThinkingEffort): ChatProvider {
    return this.#provider.withThinking(effort);
  }

  withGeneration(options: GenerationOptions): ChatProvider {
    return this.#provider.withGeneration(options);
  }

  @postConstruct()
  started(): void {
    this.lifecycle.push(`create ${this.apiKey}`);
  }

  @preDestroy()
  stopped(): void {
    this.lifecycle.push(`destroy ${this.apiKey}`);
  }
}

describe('kernel: per-tenant API keys on the wire (OpenAI provider, local server)', () => {
  let server: ChatCompletionsServer;
  let kernel: Kernel;
  let lifecycle: string[];

  /** The plugin: the server's URL and the provider class; a kernel-wide default key only if given. */
  const openaiPlugin = (options: { defaultKey?: string; tenantOnly?: boolean }) =>
    definePlugin({
      name: 'openai',
      setup(ctx) {
        ctx.bind(BaseUrl).toConstantValue(server.baseURL);
        ctx.bind(Lifecycle).toConstantValue(lifecycle);
        if (options.defaultKey !== undefined) ctx.bind(ApiKey).toConstantValue(options.defaultKey);
        ctx.bindChatProvider('openai', TenantOpenAIProvider, { tenantOnly: options.tenantOnly ?? false });
      },
    });

  const ask = (tenant: string | undefined, text: string) =>
    kernel.runner(tenant === undefined ? {} : { tenant }).step({ systemPrompt: 'You are a test.', history: [{ role: 'user', content: [textPart(text)] }] });

  beforeEach(async () => {
    server = await ChatCompletionsServer.start({ defaultReply: textReply(['Hello', ' tenant', '.'], { chunkDelayMs: 1 }) });
    kernel = new Kernel();
    lifecycle = [];
  });
  afterEach(async () => {
    await kernel.dispose();
    await server.close();
  });

  it('two tenants, the same provider class, no global key, 200 concurrent steps: each request carries its own tenant\'s key, never another\'s', async function () {
    this.timeout(30_000);
    await kernel.use(openaiPlugin({ tenantOnly: true }));
    const keys: Record<string, string> = { acme: 'sk-acme-1234', globex: 'sk-globex-5678' };
    for (const [tenant, key] of Object.entries(keys)) kernel.tenants.define(tenant, { module: (ctx) => ctx.bind(ApiKey).toConstantValue(key) });

    const tenants = Array.from({ length: 200 }, (_, i) => (i % 3 === 0 ? 'globex' : 'acme')); // uneven, interleaved
    const results = await Promise.all(tenants.map((tenant, i) => ask(tenant, `request ${i} of ${tenant}`)));

    expect(results.map((r) => r.message.content.map((p) => (p.type === 'text' ? p.text : '')).join(''))).to.deep.equal(tenants.map(() => 'Hello tenant.'));
    expect(server.requests).to.have.length(200);
    const seen = { acme: 0, globex: 0 };
    for (const request of server.requests) {
      const marker = /request (\d+) of (acme|globex)/.exec(request.rawBody);
      expect(marker, request.rawBody).to.not.equal(null);
      const [, index, tenant] = marker as unknown as [string, string, 'acme' | 'globex'];
      expect(tenants[Number(index)]).to.equal(tenant);
      expect(request.headers['authorization'], `request ${index} of ${tenant}`).to.equal(`Bearer ${keys[tenant]}`);
      seen[tenant]++;
    }
    expect(seen).to.deep.equal({ acme: 133, globex: 67 });

    // One provider per tenant (created when the tenant was defined), whatever the concurrency; none for the kernel.
    expect(lifecycle).to.deep.equal(['create sk-acme-1234', 'create sk-globex-5678']);
    await kernel.tenants.remove('acme');
    expect(lifecycle.slice(2)).to.deep.equal(['destroy sk-acme-1234']);
    await kernel.dispose();
    expect(lifecycle.slice(2)).to.deep.equal(['destroy sk-acme-1234', 'destroy sk-globex-5678']);
  });

  it('tenant-only: a step without a tenant, or a tenant without a key, fails clearly and sends nothing', async () => {
    await kernel.use(openaiPlugin({ tenantOnly: true }));
    const withoutTenant = await ask(undefined, 'none').then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(PluginError.isInstance(withoutTenant)).to.equal(true);
    expect((withoutTenant as Error).message).to.include('tenants only');
    let defineError: unknown;
    try {
      kernel.tenants.define('keyless');
    } catch (error) {
      defineError = error;
    }
    expect(defineError).to.include({ plugin: 'openai', reason: 'unbound-dependency' });
    expect((defineError as Error).message).to.include('"keyless"').and.include('TenantOpenAIProvider').and.include('Symbol(ApiKey)');
    expect(kernel.tenants.has('keyless')).to.equal(false);
    expect(server.requests).to.have.length(0);
  });

  it('with a kernel-wide default key: steps without a tenant, and tenants without a key of their own, use it', async () => {
    await kernel.use(openaiPlugin({ defaultKey: 'sk-kernel-default' }));
    kernel.tenants.define('acme', { module: (ctx) => ctx.bind(ApiKey).toConstantValue('sk-acme') });
    kernel.tenants.define('free');
    await Promise.all([ask(undefined, 'none'), ask('free', 'free'), ask('acme', 'acme')]);
    const keyOf = (marker: string): unknown => server.requests.find((r) => r.rawBody.includes(`"${marker}"`))?.headers['authorization'];
    expect([keyOf('none'), keyOf('free'), keyOf('acme')]).to.deep.equal(['Bearer sk-kernel-default', 'Bearer sk-kernel-default', 'Bearer sk-acme']);
    expect(lifecycle).to.deep.equal(['create sk-kernel-default', 'create sk-acme']);
  });
});
