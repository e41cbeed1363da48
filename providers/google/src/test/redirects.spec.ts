
import { APIStatusError, generate, isRetryableError, textPart } from '@kosong/core';
import { otherOriginServer, redirectTo } from '@kosong/core/testing';
import { expect } from 'chai';

import { textReply } from '../testing/index.js';
import { rejection, TEST_KEY, user, useServer } from './support.js';

/** A server on 127.0.0.2 (another origin than 127.0.0.1) recording the headers of each request it gets. */
const otherOrigin = () => otherOriginServer('{"error":{"code":404,"message":"the other origin","status":"NOT_FOUND"}}');


describe('GeminiChatProvider and redirects: no credential goes to another origin', () => {
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
    it(`a ${status} to another origin is not followed: x-goog-api-key stays home; an APIStatusError saying so, not retried`, async () => {
      ctx.server.reply(redirectTo(status, other.url));
      const error = await rejection(ctx.provider({ defaultHeaders: { 'x-goog-user-project-key': 'header-secret-42' } }).generate('', [], [user('hi')]));
      expect(other.received, 'requests the other origin got').to.deep.equal([]);
      expect(error).to.be.instanceOf(APIStatusError);
      expect((error as APIStatusError).statusCode).to.equal(status);
      expect(isRetryableError(error)).to.equal(false);
      expect((error as Error).message).to.match(new RegExp(`^The server answered HTTP ${status}, a redirect to "${other.url}/v1beta/models/gemini-2.5-flash:streamGenerateContent\\?alt=sse", which is not followed: `));
      expect((error as Error).message).to.not.contain(TEST_KEY);
    });
  }

  it('a redirect within the origin is followed, with the key; its next hop to another origin is not', async () => {
    ctx.server.reply(redirectTo(307, `${ctx.server.url}/proxy`), textReply(['Hel', 'lo']));
    const result = await generate({ provider: ctx.provider(), systemPrompt: '', history: [user('hi')] });
    expect(result.message.content).to.deep.equal([textPart('Hello')]);
    expect(ctx.server.requests.map((request) => [request.path.split('?')[0], request.headers['x-goog-api-key']])).to.deep.equal([
      ['/v1beta/models/gemini-2.5-flash:streamGenerateContent', TEST_KEY],
      ['/proxy/v1beta/models/gemini-2.5-flash:streamGenerateContent', TEST_KEY],
    ]);
    ctx.server.reply(redirectTo(308, `${ctx.server.url}/hop`), redirectTo(308, other.url));
    expect(((await rejection(ctx.provider().generate('', [], [user('hi')]))) as APIStatusError).statusCode).to.equal(308);
    expect(other.received).to.deep.equal([]);
  });
});
