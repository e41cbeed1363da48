import { createServer } from 'node:net';
import { inspect } from 'node:util';

import { APIConnectionError, APIStatusError, APITimeoutError, ChatProviderError, isRetryableError } from '@kosong/core';
import { expect } from 'chai';

import { AnthropicChatProvider } from '../index.js';
import { apiError, blockEvents, messageStart, textReply } from '../testing/index.js';
import { collect, delay, drain, providerFor, rejection, TEST_KEY, user, useServer } from './support.js';

describe('AnthropicChatProvider errors, timeouts and abort', () => {
  const ctx = useServer();

  describe('HTTP error statuses → APIStatusError', () => {
    for (const [status, type, retryable] of [
      [400, 'invalid_request_error', false],
      [401, 'authentication_error', false],
      [403, 'permission_error', false],
      [404, 'not_found_error', false],
      [413, 'request_too_large', false],
      [429, 'rate_limit_error', true],
      [500, 'api_error', true],
      [504, 'timeout_error', true],
      [529, 'overloaded_error', true],
    ] as const) {
      it(`${status} ${type}`, async () => {
        ctx.server.reply({ type: 'body', status, body: apiError(type, `failed with ${type}`), headers: { 'request-id': `req_${status}` } });
        const error = await rejection(providerFor(ctx.server).generate('', [], [user('go')]));
        expect(APIStatusError.isInstance(error), String(error)).to.equal(true);
        expect(error).to.include({ statusCode: status, requestId: `req_${status}` });
        expect((error as Error).message).to.equal(`Anthropic API error ${status} (${type}): failed with ${type}`);
        expect(isRetryableError(error)).to.equal(retryable);
      });
    }

    it('carries retry-after (seconds, HTTP date) and retry-after-ms', async () => {
      ctx.server.reply(
        { type: 'body', status: 429, body: apiError('rate_limit_error', 'slow down'), headers: { 'retry-after': '7' } },
        { type: 'body', status: 529, body: apiError('overloaded_error', 'Overloaded'), headers: { 'retry-after-ms': '1500', 'retry-after': '9' } },
        { type: 'body', status: 429, body: apiError('rate_limit_error', 'slow down'), headers: { 'retry-after': new Date(Date.now() + 60_000).toUTCString() } },
      );
      const provider = providerFor(ctx.server);
      expect(await rejection(provider.generate('', [], [user('go')]))).to.include({ retryAfterSeconds: 7 });
      expect(await rejection(provider.generate('', [], [user('go')]))).to.include({ retryAfterSeconds: 1.5 });
      const dated = (await rejection(provider.generate('', [], [user('go')]))) as APIStatusError;
      expect(dated.retryAfterSeconds).to.be.within(50, 61);
    });

    it('an error status with a body that is not the API format still maps by status', async () => {
      ctx.server.reply({ type: 'body', status: 502, body: '<html>Bad Gateway</html>', headers: { 'content-type': 'text/html' } });
      const error = await rejection(providerFor(ctx.server).generate('', [], [user('go')]));
      expect(error).to.include({ statusCode: 502 });
      expect(isRetryableError(error)).to.equal(true);
    });

    it('the SDK does not retry: one request per generate', async () => {
      ctx.server.reply({ type: 'body', status: 529, body: apiError('overloaded_error', 'Overloaded') });
      await rejection(providerFor(ctx.server).generate('', [], [user('go')]));
      expect(ctx.server.requests).to.have.length(1);
    });
  });

  describe('transport failures', () => {
    it('a refused connection is an APIConnectionError', async () => {
      const port = await freePort();
      const error = await rejection(new AnthropicChatProvider({ baseURL: `http://127.0.0.1:${port}`, apiKey: TEST_KEY, model: 'm' }).generate('', [], [user('go')]));
      expect(APIConnectionError.isInstance(error), String(error)).to.equal(true);
    });

    it('a connection closed before the headers is an APIConnectionError', async () => {
      ctx.server.reply((_request, response) => void response.socket?.destroy());
      const error = await rejection(providerFor(ctx.server).generate('', [], [user('go')]));
      expect(APIConnectionError.isInstance(error), String(error)).to.equal(true);
    });

    it('a server that never answers is an APITimeoutError after timeoutMs', async () => {
      ctx.server.reply({ type: 'hang' });
      const error = await rejection(providerFor(ctx.server, { timeoutMs: 200 }).generate('', [], [user('go')]));
      expect(APITimeoutError.isInstance(error), String(error)).to.equal(true);
    });

    it('a stream that goes silent is an APITimeoutError after timeoutMs, and the request is cancelled', async () => {
      ctx.server.reply({ type: 'stream', events: [messageStart(), ...blockEvents(0, { type: 'text', text: ['a'] }).slice(0, 2)], then: 'hang' });
      const stream = await providerFor(ctx.server, { timeoutMs: 300 }).generate('', [], [user('go')]);
      const { parts, error } = await drain(stream);
      expect(parts).to.have.length(1);
      expect(APITimeoutError.isInstance(error), String(error)).to.equal(true);
      expect(await ctx.server.lastRequest.closed).to.equal('aborted');
    });

    it('a slow consumer does not count as a silent server', async () => {
      ctx.server.reply({ ...textReply(['a', 'b', 'c']), eventDelayMs: 20 });
      const stream = await providerFor(ctx.server, { timeoutMs: 250 }).generate('', [], [user('go')]);
      const parts: unknown[] = [];
      for await (const part of stream) {
        parts.push(part);
        await delay(400);
      }
      expect(parts).to.have.length(3);
    });
  });

  describe('abort', () => {
    it('aborting while the response streams throws the reason and cancels the request', async () => {
      ctx.server.reply({ ...textReply(Array.from({ length: 50 }, () => 'tick ')), eventDelayMs: 30 });
      const controller = new AbortController();
      const reason = new Error('stop now');
      const stream = await providerFor(ctx.server).generate('', [], [user('go')], { signal: controller.signal });
      let seen = 0;
      const error = await (async () => {
        try {
          for await (const part of stream) {
            void part;
            if (++seen === 2) controller.abort(reason);
          }
        } catch (e) {
          return e;
        }
        return undefined;
      })();
      expect(error).to.equal(reason);
      expect(await ctx.server.lastRequest.closed).to.equal('aborted');
    });

    it('aborting before the headers throws the reason and cancels the request', async () => {
      ctx.server.reply({ type: 'hang' });
      const controller = new AbortController();
      const reason = new Error('never mind');
      const pending = providerFor(ctx.server).generate('', [], [user('go')], { signal: controller.signal });
      await delay(50);
      controller.abort(reason);
      expect(await rejection(pending)).to.equal(reason);
      expect(await ctx.server.lastRequest.closed).to.equal('aborted');
    });

    it('an aborted signal stops before any request', async () => {
      const reason = new Error('too late');
      const error = await rejection(providerFor(ctx.server).generate('', [], [user('go')], { signal: AbortSignal.abort(reason) }));
      expect(error).to.equal(reason);
      expect(ctx.server.requests).to.have.length(0);
    });

    it('leaving the iteration early cancels the request', async () => {
      ctx.server.reply({ ...textReply(Array.from({ length: 50 }, () => 'tick ')), eventDelayMs: 20 });
      const stream = await providerFor(ctx.server).generate('', [], [user('go')]);
      for await (const part of stream) {
        void part;
        break;
      }
      expect(await ctx.server.lastRequest.closed).to.equal('aborted');
    });

    it('one long-lived signal collects no listener per request (30 requests, no warning)', async () => {
      const warnings: Error[] = [];
      const onWarning = (warning: Error): number => warnings.push(warning);
      process.on('warning', onWarning);
      try {
        const controller = new AbortController();
        const provider = providerFor(ctx.server);
        for (let i = 0; i < 30; i++) await collect(await provider.generate('', [], [user('go')], { signal: controller.signal }));
        await delay(10);
        expect(warnings.map(String)).to.deep.equal([]);
      } finally {
        process.off('warning', onWarning);
      }
    });
  });

  describe('the API key is never reachable from an error', () => {
    /** Every string an error shows or holds: message, stack, own properties, cause chain, inspect output. */
    function everything(error: unknown): string {
      const seen = new Set<unknown>();
      const texts: string[] = [inspect(error, { depth: 10, showHidden: true }), JSON.stringify(error) ?? ''];
      const walk = (value: unknown, depth: number): void => {
        if (depth > 8 || value === null || typeof value !== 'object' || seen.has(value)) {
          if (typeof value === 'string') texts.push(value);
          return;
        }
        seen.add(value);
        if (value instanceof Headers) for (const [name, text] of value) texts.push(`${name}: ${text}`);
        for (const key of Reflect.ownKeys(value)) walk((value as Record<PropertyKey, unknown>)[key], depth + 1);
        if (value instanceof Error) {
          texts.push(value.message, value.stack ?? '');
          walk(value.cause, depth + 1);
        }
      };
      walk(error, 0);
      return texts.join('\n');
    }

    const echoes: readonly [string, () => void][] = [
      ['a 401 that echoes the key in its body and headers', () => ctx.server.reply((request, response) => {
        const key = String(request.headers['authorization'] ?? request.headers['x-api-key']);
        response.writeHead(401, { 'content-type': 'application/json', 'x-echo': key, 'request-id': 'req_leak' });
        response.end(JSON.stringify(apiError('authentication_error', `invalid x-api-key: ${key}`)));
      })],
      ['an error event that quotes the key', () => ctx.server.reply((request, response) => {
        const key = String(request.headers['authorization']);
        response.writeHead(200, { 'content-type': 'text/event-stream', 'x-echo': key });
        response.end(`event: error\ndata: ${JSON.stringify(apiError('api_error', `bad key ${key}`))}\n\n`);
      })],
      ['malformed stream data that holds the key', () => ctx.server.reply((request, response) => {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.end(`data: {"oops": "${String(request.headers['authorization'])}"\n\n`);
      })],
      ['an HTML 200 that quotes the key', () => ctx.server.reply((request, response) => {
        response.writeHead(200, { 'content-type': 'text/html' });
        response.end(`<html>${String(request.headers['authorization'])}</html>`);
      })],
    ];
    for (const [what, prime] of echoes) {
      it(what, async () => {
        prime();
        const provider = providerFor(ctx.server, { defaultHeaders: { 'x-proxy-token': 'proxy-secret-value-123' } });
        let error: unknown;
        try {
          await collect(await provider.generate('', [], [user('go')]));
        } catch (e) {
          error = e;
        }
        expect(ChatProviderError.isInstance(error), String(error)).to.equal(true);
        const shown = everything(error);
        expect(shown).to.not.include(TEST_KEY);
        expect(shown).to.not.include('proxy-secret-value-123');
        expect(shown).to.not.include('sk-ant-test');
        // the SDK's error stays as the cause, a scrubbed copy where it held the key
        if (what.startsWith('a 401')) expect((error as Error).cause).to.be.instanceOf(Error).and.have.property('status', 401);
      });
    }

    it('nor from the provider as logs show it', () => {
      const provider = providerFor(ctx.server);
      expect(JSON.stringify(provider)).to.not.include(TEST_KEY);
      expect(inspect(provider, { depth: 10 })).to.not.include(TEST_KEY);
      expect(inspect(provider.withThinking('high'), { depth: 10 })).to.not.include(TEST_KEY);
    });
  });
});

/** A port nothing listens on. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}
