import type { Server } from 'node:http';

import { APIStatusError, type ChatProvider, generate, isRetryableError, textPart } from '@kosong/core';
import { sameOriginRedirects } from '@kosong/core/provider-kit';
import { otherOriginServer, redirectTo } from '@kosong/core/testing';
import { expect } from 'chai';
import OpenAI from 'openai';

import { KimiChatProvider, OpenAIChatProvider, OpenAIResponsesChatProvider } from '../index.js';
import { ChatCompletionsServer, ResponsesServer, responsesReply, textReply } from '../testing/index.js';
import { rejection, TEST_KEY, user } from './support.js';

const AZURE_KEY = 'azure-key-5b7d9f1e3a';

/** A server on 127.0.0.2 (another origin than 127.0.0.1) recording the headers of each request it gets. */
const otherOrigin = () => otherOriginServer('{"error":{"message":"the other origin"}}');

async function close(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
}

describe('Redirects: no credential goes to another origin (OpenAI, Kimi, Responses)', () => {
  let chat: ChatCompletionsServer;
  let responses: ResponsesServer;
  let other: Awaited<ReturnType<typeof otherOrigin>>;
  beforeEach(async () => {
    [chat, responses, other] = await Promise.all([ChatCompletionsServer.start(), ResponsesServer.start(), otherOrigin()]);
  });
  afterEach(async () => {
    await Promise.all([chat.close(), responses.close(), close(other.server)]);
  });

  const providers: [string, (baseURL: string) => ChatProvider, () => ChatCompletionsServer | ResponsesServer][] = [
    ['OpenAIChatProvider', (baseURL) => new OpenAIChatProvider({ baseURL, apiKey: TEST_KEY, model: 'gpt-test', defaultHeaders: { 'api-key': AZURE_KEY } }), () => chat],
    ['KimiChatProvider', (baseURL) => new KimiChatProvider({ baseURL, apiKey: TEST_KEY, model: 'kimi-test', defaultHeaders: { 'api-key': AZURE_KEY } }), () => chat],
    ['OpenAIResponsesChatProvider', (baseURL) => new OpenAIResponsesChatProvider({ baseURL, apiKey: TEST_KEY, model: 'gpt-5.1', defaultHeaders: { 'api-key': AZURE_KEY } }), () => responses],
  ];

  for (const [name, create, server] of providers) {
    for (const status of [302, 307, 308]) {
      it(`${name}: a ${status} to another origin is not followed (not even with the key stripped); an APIStatusError saying so, not retried`, async () => {
        server().reply(redirectTo(status, other.url));
        const error = await rejection(create(server().baseURL).generate('', [], [user('hi')]));
        expect(other.received, 'requests the other origin got').to.deep.equal([]);
        expect(error).to.be.instanceOf(APIStatusError);
        expect((error as APIStatusError).statusCode).to.equal(status);
        expect(isRetryableError(error)).to.equal(false);
        expect((error as Error).message).to.equal(
          `The server answered HTTP ${status}, a redirect to "${other.url}/v1${name === 'OpenAIResponsesChatProvider' ? '/responses' : '/chat/completions'}", which is not followed: ` +
            'a redirect to another origin than the base URL would take the credentials there. If the API is at that address, make it the base URL.',
        );
      });
    }
  }

  it('a redirect within the origin is followed as fetch follows it: the stream comes from the new path, the key goes along', async () => {
    chat.reply(redirectTo(307, `${chat.url}/proxy`), textReply(['Hel', 'lo']));
    const provider = new OpenAIChatProvider({ baseURL: chat.baseURL, apiKey: TEST_KEY, model: 'gpt-test' });
    const result = await generate({ provider, systemPrompt: '', history: [user('hi')] });
    expect(result.message.content).to.deep.equal([textPart('Hello')]);
    expect(chat.requests.map((request) => [request.method, request.path, request.headers['authorization']])).to.deep.equal([
      ['POST', '/v1/chat/completions', `Bearer ${TEST_KEY}`],
      ['POST', '/proxy/v1/chat/completions', `Bearer ${TEST_KEY}`],
    ]);
    expect(chat.requests[1]!.rawBody).to.equal(chat.requests[0]!.rawBody);
    responses.reply(redirectTo(308, `${responses.url}/proxy`), responsesReply([{ type: 'message', text: ['ok'] }]));
    const viaResponses = new OpenAIResponsesChatProvider({ baseURL: responses.baseURL, apiKey: TEST_KEY, model: 'gpt-5.1' });
    expect((await generate({ provider: viaResponses, systemPrompt: '', history: [user('hi')] })).message.content).to.deep.equal([textPart('ok')]);
  });

  it('a redirect within the origin that leads to another origin: the second hop is not followed', async () => {
    chat.reply(redirectTo(307, `${chat.url}/hop`), redirectTo(307, other.url));
    const error = await rejection(new OpenAIChatProvider({ baseURL: chat.baseURL, apiKey: TEST_KEY, model: 'gpt-test' }).generate('', [], [user('hi')]));
    expect(other.received).to.deep.equal([]);
    expect(chat.requests).to.have.length(2);
    expect((error as APIStatusError).statusCode).to.equal(307);
  });

  it('a custom fetch is asked to follow no redirect itself', async () => {
    const modes: (RequestInit['redirect'])[] = [];
    const recording: typeof fetch = (input, init) => {
      modes.push(init?.redirect);
      return fetch(input, init);
    };
    chat.reply(redirectTo(307, other.url));
    await rejection(new OpenAIChatProvider({ baseURL: chat.baseURL, apiKey: TEST_KEY, model: 'gpt-test', fetch: recording }).generate('', [], [user('hi')]));
    expect(modes).to.deep.equal(['manual']);
    expect(other.received).to.deep.equal([]);
  });

  it('a client given as `client` follows no redirect at all (its fetch is not the provider’s): the 3xx is the error', async () => {
    const client = new OpenAI({ apiKey: TEST_KEY, baseURL: chat.baseURL, defaultHeaders: { 'api-key': AZURE_KEY } });
    chat.reply(redirectTo(307, other.url));
    const error = await rejection(new OpenAIChatProvider({ client, model: 'gpt-test' }).generate('', [], [user('hi')]));
    expect(other.received).to.deep.equal([]);
    expect(error).to.be.instanceOf(APIStatusError);
    expect((error as Error).message).to.match(/^The server answered HTTP 307, a redirect to .* which is not followed/);
  });

  describe('sameOriginRedirects', () => {
    it('turns a POST into a GET without body on a 303 (and a 301/302), dropping the body headers', async () => {
      const seen: { method: string | undefined; body: unknown; type: string | null }[] = [];
      let n = 0;
      const fake: typeof fetch = async (_input, init) => {
        seen.push({ method: init?.method, body: init?.body, type: new Headers(init?.headers).get('content-type') });
        return n++ === 0 ? new Response(null, { status: 303, headers: { location: '/next' } }) : new Response('done');
      };
      const response = await sameOriginRedirects(fake)('http://127.0.0.1:1/start', { method: 'POST', body: '{}', headers: { 'content-type': 'application/json', authorization: 'Bearer x' } });
      expect(await response.text()).to.equal('done');
      expect(seen).to.deep.equal([
        { method: 'POST', body: '{}', type: 'application/json' },
        { method: 'GET', body: null, type: null },
      ]);
    });

    it('gives up after 20 redirects, as fetch does', async () => {
      const fake: typeof fetch = async () => new Response(null, { status: 307, headers: { location: '/again' } });
      const error = await rejection(sameOriginRedirects(fake)('http://127.0.0.1:1/', { method: 'POST', body: '{}' }));
      expect(error).to.be.instanceOf(TypeError);
    });

    it('leaves a request that asks for `redirect: manual` or `error` alone', async () => {
      const modes: (RequestInit['redirect'])[] = [];
      const fake: typeof fetch = async (_input, init) => {
        modes.push(init?.redirect);
        return new Response(null, { status: 307, headers: { location: '/again' } });
      };
      expect((await sameOriginRedirects(fake)('http://127.0.0.1:1/', { redirect: 'error' })).status).to.equal(307);
      expect(modes).to.deep.equal(['error']);
    });
  });
});
