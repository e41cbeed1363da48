import { inspect } from 'node:util';

import { APIStatusError, ChatProviderError, Kernel, type ProviderPluginFactory } from '@kosong/core';
import { expect } from 'chai';
import OpenAI from 'openai';

import { KimiChatProvider, kimiPlugin, OpenAIChatProvider, openAIPlugin, providerPlugins } from '../index.js';
import { textReply } from '../testing/index.js';
import { rejection, TEST_KEY, user, useServer } from './support.js';

describe('kernel plugins and providerPlugins', () => {
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

  it('openAIPlugin: configured from OPENAI_API_KEY / OPENAI_BASE_URL / OPENAI_MODEL, bound as the default provider', async () => {
    const env = { OPENAI_API_KEY: TEST_KEY, OPENAI_BASE_URL: ctx.server.baseURL, OPENAI_MODEL: 'gpt-from-env' };
    const kernel = await kernelWith(openAIPlugin({ env }));
    expect(kernel.plugins()).to.deep.equal(['provider:openai']);
    expect(kernel.providers()).to.deep.equal(['openai']);
    const provider = kernel.runner().provider;
    expect(provider).to.be.instanceOf(OpenAIChatProvider);
    expect(provider.modelName).to.equal('gpt-from-env');
    ctx.server.reply(textReply(['Hi from env']));
    const result = await kernel.runner().step({ systemPrompt: 'sys', history: [user('hi')] });
    expect(result.message.content).to.deep.equal([{ type: 'text', text: 'Hi from env' }]);
    expect(ctx.server.lastRequest.headers['authorization']).to.equal(`Bearer ${TEST_KEY}`);
    expect((ctx.server.lastRequest.body as { model: string }).model).to.equal('gpt-from-env');
  });

  it('kimiPlugin: configured from KIMI_API_KEY / KIMI_BASE_URL / KIMI_MODEL', async () => {
    const env = { KIMI_API_KEY: TEST_KEY, KIMI_BASE_URL: ctx.server.baseURL, KIMI_MODEL: 'kimi-from-env' };
    const kernel = await kernelWith(kimiPlugin({ env }));
    expect(kernel.providers()).to.deep.equal(['kimi']);
    const provider = kernel.runner({ provider: 'kimi' }).provider;
    expect(provider).to.be.instanceOf(KimiChatProvider);
    await kernel.runner().step({ systemPrompt: '', history: [user('hi')] });
    expect((ctx.server.lastRequest.body as { model: string }).model).to.equal('kimi-from-env');
  });

  it('options win over the environment', async () => {
    const env = { OPENAI_API_KEY: TEST_KEY, OPENAI_MODEL: 'from-env', OPENAI_BASE_URL: 'http://from-env.invalid/v1' };
    const kernel = await kernelWith(openAIPlugin({ env, model: 'from-options', baseURL: ctx.server.baseURL, providerName: 'gpt', default: false }));
    const provider = kernel.runner({ provider: 'gpt' }).provider as OpenAIChatProvider;
    expect(provider.modelName).to.equal('from-options');
    expect(provider.baseURL).to.equal(ctx.server.baseURL);
    expect(kernel.plugins()).to.deep.equal(['provider:gpt']);
  });

  it('falls back to the default models and base URLs', async () => {
    const kernel = await kernelWith(openAIPlugin({ env: { OPENAI_API_KEY: TEST_KEY } }), kimiPlugin({ env: { KIMI_API_KEY: TEST_KEY }, default: false }));
    const openai = kernel.runner({ provider: 'openai' }).provider as OpenAIChatProvider;
    const kimi = kernel.runner({ provider: 'kimi' }).provider as KimiChatProvider;
    expect([openai.modelName, openai.baseURL]).to.deep.equal(['gpt-4.1', 'https://api.openai.com/v1']);
    expect([kimi.modelName, kimi.baseURL]).to.deep.equal(['kimi-k2-turbo-preview', 'https://api.moonshot.ai/v1']);
    expect(kernel.providers()[0]).to.equal('openai');
  });

  it('a missing key is a clear error naming the variable', () => {
    expect(() => openAIPlugin({ env: {} })).to.throw(ChatProviderError, /openAIPlugin: no API key\. Set the OPENAI_API_KEY environment variable, or pass the `apiKey` option/);
    expect(() => kimiPlugin({ env: { KIMI_API_KEY: '   ' } })).to.throw(ChatProviderError, /kimiPlugin: no API key\. Set the KIMI_API_KEY environment variable/);
    expect(() => openAIPlugin({ env: { KIMI_API_KEY: TEST_KEY } })).to.throw(/OPENAI_API_KEY/);
  });

  it('needs no key when given a client', async () => {
    const client = new OpenAI({ apiKey: 'sk-own-client-1234', baseURL: ctx.server.baseURL });
    const kernel = await kernelWith(openAIPlugin({ env: { OPENAI_BASE_URL: 'http://ignored.invalid' }, client }));
    await kernel.runner().step({ systemPrompt: '', history: [user('hi')] });
    expect(ctx.server.lastRequest.headers['authorization']).to.equal('Bearer sk-own-client-1234');
  });

  it('never shows the key in errors or logs', async () => {
    const env = { KIMI_API_KEY: TEST_KEY, KIMI_BASE_URL: ctx.server.baseURL };
    const kernel = await kernelWith(kimiPlugin({ env }));
    ctx.server.reply({
      type: 'json',
      status: 401,
      body: { error: { message: `Invalid Authentication: Bearer ${TEST_KEY} (key ${TEST_KEY})`, type: 'invalid_authentication_error' } },
    });
    const error = (await rejection(kernel.runner().step({ systemPrompt: '', history: [user('hi')] }))) as APIStatusError;
    expect(error).to.be.instanceOf(APIStatusError);
    expect(error.statusCode).to.equal(401);
    expect(error.message).to.equal('401 Invalid Authentication: Bearer [REDACTED] (key [REDACTED])');
    expect(inspect(error, { depth: 10 })).to.not.contain(TEST_KEY);
    expect(JSON.stringify(error)).to.not.contain(TEST_KEY);
    expect(inspect(kernel.runner().provider, { depth: 10 })).to.not.contain(TEST_KEY);
    const missing = (() => {
      try {
        openAIPlugin({ env: { OPENAI_BASE_URL: TEST_KEY } });
      } catch (caught) {
        return caught as Error;
      }
      return undefined;
    })();
    expect(missing?.message).to.not.contain(TEST_KEY);
  });

  describe('providerPlugins (what `kosong --provider …` offers)', () => {
    const byName = (name: string): ProviderPluginFactory => providerPlugins.find((entry) => entry.name === name)!;

    it('offers openai, openai-responses and kimi, each naming its variables', () => {
      expect(providerPlugins.map((entry) => entry.name)).to.deep.equal(['openai', 'openai-responses', 'kimi']);
      expect(byName('openai').description).to.contain('OPENAI_API_KEY');
      expect(byName('kimi').description).to.contain('KIMI_API_KEY');
    });

    it('creates plugins from the given environment that bind the provider under the entry name, as default', async () => {
      const openai = byName('openai').create({ OPENAI_API_KEY: TEST_KEY, OPENAI_BASE_URL: ctx.server.baseURL });
      const kernel = await kernelWith(openai);
      expect(kernel.providers()).to.deep.equal(['openai']);
      await kernel.runner({ provider: 'openai' }).step({ systemPrompt: '', history: [user('hi')] });
      expect(ctx.server.requests).to.have.length(1);
      const kimiKernel = await kernelWith(byName('kimi').create({ KIMI_API_KEY: TEST_KEY }));
      expect(kimiKernel.runner({ provider: 'kimi' }).provider.name).to.equal('kimi');
    });

    it('fails to create without a key, naming the variable', () => {
      expect(() => byName('openai').create({})).to.throw(/OPENAI_API_KEY/);
      expect(() => byName('kimi').create({ OPENAI_API_KEY: TEST_KEY })).to.throw(/KIMI_API_KEY/);
    });
  });
});
