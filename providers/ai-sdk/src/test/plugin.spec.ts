/**
 * The kernel side: `aiSdkPlugin` registers models; `loadAiSdkModel` and the `ai-sdk` entry of
 * `providerPlugins` load a provider package from a `node_modules` (a fake package written to a
 * temporary directory, in the shape of the AI SDK's packages: an ESM `exports` map, a factory and a
 * default instance).
 */
import { ChatProviderError, createMessage, Kernel } from '@kosong/core';
import { expect } from 'chai';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { aiSdkPlugin } from '../ai-sdk-plugin.js';
import { AiSdkChatProvider } from '../ai-sdk-provider.js';
import { loadAiSdkModel, parseModelSpec } from '../model-loader.js';
import { aiSdkEnvironmentPlugin, providerPlugins } from '../provider-plugins.js';
import { finish, modelV4, rejection, textBlock } from './support.js';

/**
 * A provider package `@acme/ai` in the AI SDK's shape: `createAcme(settings)` and `acme`, whose
 * models answer `<model id> <settings>` and need `ACME_API_KEY` (read when their headers are).
 */
const PACKAGE = `
const stream = (text) => new ReadableStream({ start(c) { c.enqueue({ type: 'text-delta', id: 't', delta: text }); c.enqueue({ type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage: { inputTokens: {}, outputTokens: {} } }); c.close(); } });
export function createAcme(settings = {}) {
  const languageModel = (modelId) => ({
    specificationVersion: 'v4', provider: 'acme.chat', modelId, supportedUrls: {},
    config: { headers: () => { const key = settings.apiKey ?? process.env.ACME_API_KEY; if (!key) { const e = new Error("Acme API key is missing. Pass it using the 'apiKey' parameter or the ACME_API_KEY environment variable."); e[Symbol.for('vercel.ai.error')] = true; e[Symbol.for('vercel.ai.error.AI_LoadAPIKeyError')] = true; throw e; } return { authorization: 'Bearer ' + key }; } },
    doStream: async () => ({ stream: stream(modelId + ' ' + JSON.stringify(Object.keys(settings).sort())) }),
    doGenerate: async () => { throw new Error('no'); },
  });
  const provider = (modelId) => languageModel(modelId);
  provider.languageModel = languageModel;
  return provider;
}
export const acme = createAcme();
export const VERSION = '1.0.0';
`;

describe('aiSdkPlugin and the provider package loader', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'kosong-ai-sdk-'));
    const root = join(dir, 'node_modules', '@acme', 'ai');
    mkdirSync(join(root, 'dist'), { recursive: true });
    writeFileSync(join(root, 'package.json'), JSON.stringify({ name: '@acme/ai', type: 'module', exports: { './package.json': './package.json', '.': { types: './dist/index.d.ts', import: './dist/index.js', default: './dist/index.js' } } }));
    writeFileSync(join(root, 'dist', 'index.js'), PACKAGE);
    mkdirSync(join(dir, 'project', 'src'), { recursive: true });
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('aiSdkPlugin registers the model under its name; several side by side, the first the default', async () => {
    const kernel = new Kernel();
    await kernel.use(aiSdkPlugin({ name: 'fast', model: modelV4([...textBlock('t', 'fast'), finish()]) }), aiSdkPlugin({ name: 'smart', model: modelV4([...textBlock('t', 'smart'), finish()]) }));
    const history = [createMessage('user', 'hi')];
    const first = await kernel.runner().step({ systemPrompt: '', history });
    expect(first.message.content).to.deep.equal([{ type: 'text', text: 'fast' }]);
    const second = await kernel.runner({ provider: 'smart' }).step({ systemPrompt: '', history });
    expect(second.message.content).to.deep.equal([{ type: 'text', text: 'smart' }]);
    await kernel.dispose();
  });

  it('refuses an option it does not know (a misspelt timeoutMs or setting is never ignored), also through aiSdkPlugin', () => {
    const model = modelV4([finish()]);
    expect(() => new AiSdkChatProvider(model, { timeout: 5 } as never)).to.throw(TypeError, /timeout/);
    expect(() => new AiSdkChatProvider(model, { settings: { top_k: 3 } } as never)).to.throw(TypeError, /top_k/);
    expect(() => aiSdkPlugin({ name: 'x', model, header: {} } as never)).to.throw(TypeError, /header/);
    expect(() => new AiSdkChatProvider(model, { timeoutMs: 5, settings: { topK: 3 } })).not.to.throw();
  });

  it('parseModelSpec: the package is what comes before the first colon (model ids may hold colons)', () => {
    expect(parseModelSpec('@ai-sdk/mistral:mistral-large-latest')).to.deep.equal({ packageName: '@ai-sdk/mistral', modelId: 'mistral-large-latest' });
    expect(parseModelSpec('@ai-sdk/amazon-bedrock:anthropic.claude-3-5-sonnet-20240620-v1:0')).to.deep.equal({ packageName: '@ai-sdk/amazon-bedrock', modelId: 'anthropic.claude-3-5-sonnet-20240620-v1:0' });
    for (const bad of ['@ai-sdk/mistral', '@ai-sdk/mistral:', 'Not A Package:m', ':m']) expect(() => parseModelSpec(bad), bad).to.throw(ChatProviderError, /<package>:<model-id>/);
  });

  it("loads the package from the node_modules of the working directory's parents, made by its factory with a fetch", async () => {
    const model = await loadAiSdkModel('@acme/ai:acme-1', { cwd: join(dir, 'project', 'src'), settings: { apiKey: 'acme-key-123456' } });
    expect(model).to.include({ provider: 'acme.chat', modelId: 'acme-1' });
    const provider = new AiSdkChatProvider(model);
    const stream = await provider.generate('', [], [createMessage('user', 'hi')]);
    const parts = [];
    for await (const part of stream) parts.push(part);
    expect(parts).to.deep.equal([{ type: 'text', text: 'acme-1 ["apiKey","fetch"]' }]);
  });

  it('a package that is not installed: says how to install it', async () => {
    const caught = await rejection(loadAiSdkModel('@ai-sdk/not-installed-anywhere:m', { cwd: dir }));
    expect(ChatProviderError.isInstance(caught)).to.equal(true);
    expect((caught as Error).message).to.equal(
      'ai-sdk: the AI SDK provider package @ai-sdk/not-installed-anywhere is not installed. Install it where you run kosong: npm install @ai-sdk/not-installed-anywhere (for a global kosong: npm install -g @ai-sdk/not-installed-anywhere)',
    );
  });

  it('a missing key is an error when the model is loaded, naming the variable', async () => {
    const caught = await rejection(loadAiSdkModel('@acme/ai:acme-1', { cwd: dir }));
    expect((caught as Error).message).to.equal('ai-sdk (@acme/ai): no API key. Set the ACME_API_KEY environment variable, or pass the `apiKey` option');
  });

  it('a package that exports no provider says so', async () => {
    writeFileSync(join(dir, 'node_modules', '@acme', 'ai', 'dist', 'index.js'), 'export const nothing = 1;\n');
    const caught = await rejection(loadAiSdkModel('@acme/ai:acme-1', { cwd: dir }));
    expect((caught as Error).message).to.contain('@acme/ai exports no AI SDK provider');
  });

  it('providerPlugins: the ai-sdk entry, listed in the package.json; AI_SDK_MODEL names the model, AI_SDK_API_KEY / AI_SDK_BASE_URL go to the factory', async () => {
    const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { kosong: { providerPlugins: unknown } };
    expect(manifest.kosong.providerPlugins).to.deep.equal(providerPlugins.map(({ name, description }) => ({ name, description })));
    const kernel = new Kernel();
    await kernel.use(aiSdkEnvironmentPlugin({ env: { AI_SDK_MODEL: '@acme/ai:acme-2', AI_SDK_API_KEY: 'acme-key-123456', AI_SDK_BASE_URL: 'http://127.0.0.1:9/v1' }, cwd: dir }));
    const result = await kernel.runner().step({ systemPrompt: '', history: [createMessage('user', 'hi')] });
    expect(result.message.content).to.deep.equal([{ type: 'text', text: 'acme-2 ["apiKey","baseURL","fetch"]' }]);
    await kernel.dispose();
  });

  it('providerPlugins: without AI_SDK_MODEL, an error that says how to name one', () => {
    expect(() => providerPlugins[0]!.create({})).to.throw(ChatProviderError, /--model \(AI_SDK_MODEL\), e\.g\. @ai-sdk\/mistral:mistral-large-latest/);
  });
});
