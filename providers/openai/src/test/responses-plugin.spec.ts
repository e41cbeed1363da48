import { ChatProviderError, Kernel, textPart } from '@kosong/core';
import { expect } from 'chai';
import OpenAI from 'openai';

import { OpenAIResponsesChatProvider, openaiResponsesPlugin, providerPlugins } from '../index.js';
import { responsesReply } from '../testing/index.js';
import { lastBody, useResponsesServer } from './responses-support.js';
import { TEST_KEY, user } from './support.js';

describe('openaiResponsesPlugin and its providerPlugins entry', () => {
  const ctx = useResponsesServer();
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

  it('configured from OPENAI_API_KEY / OPENAI_BASE_URL / OPENAI_MODEL, bound as the default provider `openai-responses`', async () => {
    const env = { OPENAI_API_KEY: TEST_KEY, OPENAI_BASE_URL: ctx.server.baseURL, OPENAI_MODEL: 'gpt-from-env' };
    const kernel = await kernelWith(openaiResponsesPlugin({ env }));
    expect(kernel.plugins()).to.deep.equal(['provider:openai-responses']);
    expect(kernel.providers()).to.deep.equal(['openai-responses']);
    const provider = kernel.runner().provider;
    expect(provider).to.be.instanceOf(OpenAIResponsesChatProvider);
    ctx.server.reply(responsesReply([{ type: 'message', text: ['Hi from env'] }]));
    const result = await kernel.runner().step({ systemPrompt: 'sys', history: [user('hi')] });
    expect(result.message.content).to.deep.equal([textPart('Hi from env')]);
    expect(ctx.server.lastRequest.headers['authorization']).to.equal(`Bearer ${TEST_KEY}`);
    expect(lastBody(ctx.server)).to.include({ model: 'gpt-from-env', store: false });
  });

  it('options win over the environment; defaults are gpt-5.1 at api.openai.com', async () => {
    const env = { OPENAI_API_KEY: TEST_KEY, OPENAI_MODEL: 'from-env', OPENAI_BASE_URL: 'http://from-env.invalid/v1' };
    const kernel = await kernelWith(openaiResponsesPlugin({ env, model: 'from-options', baseURL: ctx.server.baseURL, providerName: 'r', default: false }));
    const provider = kernel.runner({ provider: 'r' }).provider as OpenAIResponsesChatProvider;
    expect([provider.modelName, provider.baseURL]).to.deep.equal(['from-options', ctx.server.baseURL]);
    const defaults = (await kernelWith(openaiResponsesPlugin({ env: { OPENAI_API_KEY: TEST_KEY } }))).runner().provider as OpenAIResponsesChatProvider;
    expect([defaults.modelName, defaults.baseURL]).to.deep.equal(['gpt-5.1', 'https://api.openai.com/v1']);
  });

  it('a missing key is a clear error naming the variable; a client needs none', async () => {
    expect(() => openaiResponsesPlugin({ env: {} })).to.throw(ChatProviderError, /openaiResponsesPlugin: no API key\. Set the OPENAI_API_KEY environment variable/);
    const client = new OpenAI({ apiKey: 'sk-own-client-1234', baseURL: ctx.server.baseURL });
    const kernel = await kernelWith(openaiResponsesPlugin({ env: {}, client }));
    await kernel.runner().step({ systemPrompt: '', history: [user('hi')] });
    expect(ctx.server.lastRequest.headers['authorization']).to.equal('Bearer sk-own-client-1234');
  });

  it('providerPlugins has the `openai-responses` entry, creating the plugin from the given environment', async () => {
    const entry = providerPlugins.find((candidate) => candidate.name === 'openai-responses')!;
    expect(entry.description).to.contain('OPENAI_API_KEY').and.contain('Responses');
    const kernel = await kernelWith(entry.create({ OPENAI_API_KEY: TEST_KEY, OPENAI_BASE_URL: ctx.server.baseURL }));
    await kernel.runner({ provider: 'openai-responses' }).step({ systemPrompt: '', history: [user('hi')] });
    expect(ctx.server.requests).to.have.length(1);
    expect(() => entry.create({})).to.throw(/OPENAI_API_KEY/);
  });
});
