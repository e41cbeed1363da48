import { ChatProviderError, Kernel, type ChatProvider } from '@kosong/core';
import { expect } from 'chai';

import { DEFAULT_GEMINI_MODEL, GeminiChatProvider, geminiPlugin, providerPlugins } from '../index.js';
import { collect, TEST_KEY, user, useServer } from './support.js';

async function boundProvider(plugin: ReturnType<typeof geminiPlugin>, name = 'gemini'): Promise<ChatProvider> {
  const kernel = new Kernel();
  await kernel.use(plugin);
  const provider = kernel.container.get<ChatProvider>(Symbol.for('kosong.ChatProvider'), { name });
  await kernel.dispose();
  return provider;
}

describe('geminiPlugin and providerPlugins', () => {
  const ctx = useServer();

  it('reads GEMINI_API_KEY, GEMINI_BASE_URL and GEMINI_MODEL, and binds the default provider `gemini`', async () => {
    const provider = await boundProvider(geminiPlugin({ env: { GEMINI_API_KEY: TEST_KEY, GEMINI_BASE_URL: ctx.server.url, GEMINI_MODEL: 'gemini-3-flash-preview' } }));
    expect(provider).to.be.instanceOf(GeminiChatProvider);
    expect(provider.modelName).to.equal('gemini-3-flash-preview');
    await collect(await provider.generate('', [], [user('hi')]));
    expect(ctx.server.lastRequest.headers['x-goog-api-key']).to.equal(TEST_KEY);
    expect(ctx.server.lastRequest.model).to.equal('gemini-3-flash-preview');
  });

  it('falls back to GOOGLE_API_KEY and the default model; options win over the environment', async () => {
    const fromGoogle = await boundProvider(geminiPlugin({ env: { GOOGLE_API_KEY: 'google-key-123456', GEMINI_BASE_URL: ctx.server.url } }));
    expect(fromGoogle.modelName).to.equal(DEFAULT_GEMINI_MODEL);
    await collect(await fromGoogle.generate('', [], [user('hi')]));
    expect(ctx.server.lastRequest.headers['x-goog-api-key']).to.equal('google-key-123456');
    const both = await boundProvider(geminiPlugin({ env: { GOOGLE_API_KEY: 'google-key-123456', GEMINI_API_KEY: TEST_KEY, GEMINI_BASE_URL: ctx.server.url } }));
    await collect(await both.generate('', [], [user('hi')]));
    expect(ctx.server.lastRequest.headers['x-goog-api-key'], 'GEMINI_API_KEY first').to.equal(TEST_KEY);
    const explicit = await boundProvider(
      geminiPlugin({ env: { GEMINI_API_KEY: 'ignored-key-0000', GEMINI_MODEL: 'ignored' }, apiKey: TEST_KEY, baseURL: ctx.server.url, model: 'gemini-x', providerName: 'g2' }),
      'g2',
    );
    expect(explicit.modelName).to.equal('gemini-x');
  });

  it('selects Vertex AI with GOOGLE_GENAI_USE_VERTEXAI: express mode with a key', async () => {
    const provider = await boundProvider(geminiPlugin({ env: { GOOGLE_GENAI_USE_VERTEXAI: 'true', GEMINI_API_KEY: TEST_KEY, GEMINI_BASE_URL: ctx.server.url } }));
    expect((provider as GeminiChatProvider).vertexAI).to.equal(true);
    await collect(await provider.generate('', [], [user('hi')]));
    expect(ctx.server.lastRequest.path).to.equal(`/v1beta1/publishers/google/models/${DEFAULT_GEMINI_MODEL}:streamGenerateContent?alt=sse`);
  });

  it('no key: a ChatProviderError naming the variables, never a value; blank variables count as unset', () => {
    expect(() => geminiPlugin({ env: {} })).to.throw(ChatProviderError, /Set the GEMINI_API_KEY \(or GOOGLE_API_KEY\) environment variable/);
    expect(() => geminiPlugin({ env: { GEMINI_API_KEY: '   ' } })).to.throw(ChatProviderError, /no API key/);
    expect(() => geminiPlugin({ env: { GOOGLE_GENAI_USE_VERTEXAI: 'true' } })).to.throw(ChatProviderError, /needs a `vertexAI.project`/);
  });

  it('providerPlugins offers `gemini`, built from the environment it is given', async () => {
    expect(providerPlugins.map((entry) => entry.name)).to.deep.equal(['gemini']);
    const [entry] = providerPlugins;
    expect(entry!.description).to.match(/GEMINI_API_KEY/);
    const provider = await boundProvider(entry!.create({ GEMINI_API_KEY: TEST_KEY, GEMINI_BASE_URL: ctx.server.url }));
    expect(provider.name).to.equal('google_genai');
    expect(() => entry!.create({})).to.throw(ChatProviderError, /GEMINI_API_KEY/);
  });
});
