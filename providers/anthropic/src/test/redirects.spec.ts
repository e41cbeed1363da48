import Anthropic from '@anthropic-ai/sdk';

import { APIStatusError, generate, isRetryableError, textPart } from '@kosong/core';
import { otherOriginServer, redirectTo } from '@kosong/core/testing';
import { expect } from 'chai';

import { AnthropicChatProvider } from '../index.js';
import { textReply } from '../testing/index.js';
import { providerFor, rejection, TEST_KEY, user, useServer } from './support.js';

/** A server on 127.0.0.2 (another origin than 127.0.0.1) recording the headers of each request it gets. */
const otherOrigin = () => otherOriginServer('{"type":"error","error":{"type":"not_found_error","message":"the other origin"}}');


describe('AnthropicChatProvider and redirects: no credential goes to another origin', () => {
  const ctx = useServer();
  let other: Awaited<ReturnType<typeof otherOrigin>>;
  beforeEach(async () => {
    other = await otherOrigin();
  });
  afterEach(async () => {
    other.server.closeAllConnections();
    await new Promise((resolve) => other.server.close(resolve));
  });

  for (const status of [302, 307, 308]) {
    it(`a ${status} to another origin is not followed: neither the key nor an x-api-key header goes there; an APIStatusError saying so, not retried`, async () => {
      ctx.server.reply(redirectTo(status, other.url));
      const error = await rejection(providerFor(ctx.server, { defaultHeaders: { 'x-api-key': 'gateway-secret-42' } }).generate('', [], [user('hi')]));
      expect(other.received, 'requests the other origin got').to.deep.equal([]);
      expect(error).to.be.instanceOf(APIStatusError);
      expect((error as APIStatusError).statusCode).to.equal(status);
      expect(isRetryableError(error)).to.equal(false);
      expect((error as Error).message).to.equal(
        `The server answered HTTP ${status}, a redirect to "${other.url}/v1/messages", which is not followed: ` +
          'a redirect to another origin than the base URL would take the credentials there. If the API is at that address, make it the base URL.',
      );
    });
  }

  it('a redirect within the origin is followed, with the key; its next hop to another origin is not', async () => {
    ctx.server.reply(redirectTo(307, `${ctx.server.url}/proxy`), textReply(['Hel', 'lo']));
    const result = await generate({ provider: providerFor(ctx.server), systemPrompt: '', history: [user('hi')] });
    expect(result.message.content).to.deep.equal([textPart('Hello')]);
    expect(ctx.server.requests.map((request) => request.path)).to.deep.equal(['/v1/messages', '/proxy/v1/messages']);
    expect(ctx.server.requests[1]!.headers['authorization'] ?? ctx.server.requests[1]!.headers['x-api-key']).to.contain(TEST_KEY);
    ctx.server.reply(redirectTo(308, `${ctx.server.url}/hop`), redirectTo(308, other.url));
    expect(((await rejection(providerFor(ctx.server).generate('', [], [user('hi')]))) as APIStatusError).statusCode).to.equal(308);
    expect(other.received).to.deep.equal([]);
  });

  it('a client given as `client` follows no redirect at all (its fetch is not the provider’s): the 3xx is the error', async () => {
    const client = new Anthropic({ apiKey: TEST_KEY, baseURL: ctx.server.url, defaultHeaders: { 'x-api-key': 'gateway-secret-42' } });
    ctx.server.reply(redirectTo(307, other.url));
    const error = await rejection(new AnthropicChatProvider({ client, model: 'claude-sonnet-4-6' }).generate('', [], [user('hi')]));
    expect(other.received).to.deep.equal([]);
    expect((error as APIStatusError).statusCode).to.equal(307);
    expect((error as Error).message).to.match(/^The server answered HTTP 307, a redirect to .* which is not followed/);
  });
});
