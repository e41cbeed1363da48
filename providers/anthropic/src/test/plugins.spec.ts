import Anthropic from '@anthropic-ai/sdk';
import { ChatProviderError, Kernel } from '@kosong/core';
import { expect } from 'chai';

import { AnthropicChatProvider, anthropicPlugin, providerPlugins } from '../index.js';
import { textReply } from '../testing/index.js';
import { TEST_KEY, user, useServer } from './support.js';

describe('anthropicPlugin and providerPlugins', () => {
  const ctx = useServer();
  const kernels: Kernel[] = [];
  afterEach(async () => {
    for (const kernel of kernels.splice(0)) await kernel.dispose();
  });

  async function kernelWith(...plugins: Parameters<Kernel['use']>): Promise<Kernel> {
    const kernel = new Kernel();
    kernels.push(kernel);
    await kernel.use(...plugins);
    return kernel;
  }

  it('is configured from ANTHROPIC_API_KEY / ANTHROPIC_BASE_URL / ANTHROPIC_MODEL and bound as the default provider', async () => {
    const env = { ANTHROPIC_API_KEY: TEST_KEY, ANTHROPIC_BASE_URL: ctx.server.url, ANTHROPIC_MODEL: 'claude-from-env' };
    const kernel = await kernelWith(anthropicPlugin({ env }));
    expect(kernel.plugins()).to.deep.equal(['provider:anthropic']);
    expect(kernel.providers()).to.deep.equal(['anthropic']);
    const provider = kernel.runner().provider;
    expect(provider).to.be.instanceOf(AnthropicChatProvider);
    expect(provider.modelName).to.equal('claude-from-env');
    ctx.server.reply(textReply(['Hi from env']));
    const result = await kernel.runner().step({ systemPrompt: 'sys', history: [user('hi')] });
    expect(result.message.content).to.deep.equal([{ type: 'text', text: 'Hi from env' }]);
    expect(ctx.server.lastRequest.headers['authorization']).to.equal(`Bearer ${TEST_KEY}`);
    expect((ctx.server.lastRequest.body as { model: string }).model).to.equal('claude-from-env');
  });

  it('options win over the environment; blank variables count as unset', async () => {
    const env = { ANTHROPIC_API_KEY: TEST_KEY, ANTHROPIC_MODEL: '  ', ANTHROPIC_BASE_URL: 'http://from-env.invalid' };
    const kernel = await kernelWith(anthropicPlugin({ env, baseURL: ctx.server.url, providerName: 'claude', default: false, defaultMaxTokens: 333 }));
    const provider = kernel.runner({ provider: 'claude' }).provider as AnthropicChatProvider;
    expect(provider.modelName).to.equal('claude-sonnet-4-6');
    expect(provider.baseURL).to.equal(ctx.server.url);
    await kernel.runner({ provider: 'claude' }).step({ systemPrompt: '', history: [user('hi')] });
    expect((ctx.server.lastRequest.body as { max_tokens: number }).max_tokens).to.equal(333);
  });

  it('defaults to the Anthropic API, never reading process.env behind the options', async () => {
    const saved = process.env['ANTHROPIC_BASE_URL'];
    process.env['ANTHROPIC_BASE_URL'] = 'http://process-env.invalid';
    try {
      expect(new AnthropicChatProvider({ apiKey: TEST_KEY, model: 'm' }).baseURL).to.equal('https://api.anthropic.com');
      const kernel = await kernelWith(anthropicPlugin({ env: { ANTHROPIC_API_KEY: TEST_KEY } }));
      expect((kernel.runner().provider as AnthropicChatProvider).baseURL).to.equal('https://api.anthropic.com');
    } finally {
      if (saved === undefined) delete process.env['ANTHROPIC_BASE_URL'];
      else process.env['ANTHROPIC_BASE_URL'] = saved;
    }
  });

  it('a missing key is a clear error naming the variable, and never quotes a value', () => {
    expect(() => anthropicPlugin({ env: {} })).to.throw(ChatProviderError, /anthropicPlugin: no API key\. Set the ANTHROPIC_API_KEY environment variable, or pass the `apiKey` option/);
    expect(() => anthropicPlugin({ env: { ANTHROPIC_API_KEY: '  ', ANTHROPIC_BASE_URL: TEST_KEY } })).to.throw(ChatProviderError).with.property('message').that.does.not.include(TEST_KEY);
    expect(() => new AnthropicChatProvider({ model: 'm' })).to.throw(ChatProviderError, /needs an `apiKey`/);
    expect(() => new AnthropicChatProvider({ apiKey: TEST_KEY, model: 'm', defaultMaxTokens: 0 })).to.throw(ChatProviderError, /positive integer/);
  });

  it('uses a given client as configured, with no key of its own', async () => {
    const client = new Anthropic({ apiKey: 'sk-ant-own-client-1234', baseURL: ctx.server.url });
    const kernel = await kernelWith(anthropicPlugin({ env: { ANTHROPIC_BASE_URL: 'http://ignored.invalid' }, client }));
    await kernel.runner().step({ systemPrompt: '', history: [user('hi')] });
    expect(ctx.server.lastRequest.headers['authorization']).to.equal('Bearer sk-ant-own-client-1234');
    expect(() => new AnthropicChatProvider({ client, apiKey: TEST_KEY, model: 'm' })).to.throw(ChatProviderError, /either `client` or `apiKey`/);
  });

  describe('providerPlugins (what `kosong --provider …` offers)', () => {
    it('offers anthropic, naming its variables', () => {
      expect(providerPlugins.map((entry) => entry.name)).to.deep.equal(['anthropic']);
      expect(providerPlugins[0]!.description).to.contain('ANTHROPIC_API_KEY').and.contain('ANTHROPIC_BASE_URL').and.contain('ANTHROPIC_MODEL');
    });

    it('creates a plugin from the given environment that binds the provider as default', async () => {
      const kernel = await kernelWith(providerPlugins[0]!.create({ ANTHROPIC_API_KEY: TEST_KEY, ANTHROPIC_BASE_URL: ctx.server.url }));
      expect(kernel.providers()).to.deep.equal(['anthropic']);
      await kernel.runner({ provider: 'anthropic' }).step({ systemPrompt: '', history: [user('hi')] });
      expect(ctx.server.requests).to.have.length(1);
      expect(() => providerPlugins[0]!.create({ OPENAI_API_KEY: TEST_KEY })).to.throw(/ANTHROPIC_API_KEY/);
    });
  });
});
