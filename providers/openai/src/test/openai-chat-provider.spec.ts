import { createServer } from 'node:net';
import { inspect } from 'node:util';

import {
  APIConnectionError,
  APIStatusError,
  APITimeoutError,
  ChatProviderError,
  generate,
  isRetryableError,
  textPart,
  thinkPart,
  tokenUsage,
  toolCall,
  toolCallPart,
} from '@kosong/core';
import { expect } from 'chai';
import OpenAI from 'openai';

import { OpenAIChatProvider, type OpenAIChatProviderOptions } from '../index.js';
import { completionChunk, textReply, toolCallChunk, usageChunk } from '../testing/index.js';
import { collect, delay, drain, rejection, TEST_KEY, user, useServer } from './support.js';

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** How the exchange ended for the server, or `open` if it has not within `ms`. */
function closedWithin(closed: Promise<'completed' | 'aborted'>, ms = 2_000): Promise<string> {
  return Promise.race([closed, delay(ms).then(() => 'open')]);
}

describe('OpenAIChatProvider over HTTP', () => {
  const ctx = useServer();
  const provider = (options: Partial<OpenAIChatProviderOptions> = {}): OpenAIChatProvider =>
    new OpenAIChatProvider({ baseURL: ctx.server.baseURL, apiKey: TEST_KEY, model: 'gpt-test', ...options });

  describe('streaming', () => {
    it('streams text deltas, then has the id, usage and finish reason; authenticates with the key', async () => {
      ctx.server.reply(textReply(['Hello', ', ', 'world!'], { id: 'chatcmpl-42' }));
      const stream = await provider().generate('', [], [user('hi')]);
      expect(await collect(stream)).to.deep.equal([textPart('Hello'), textPart(', '), textPart('world!')]);
      expect(stream.id).to.equal('chatcmpl-42');
      expect(stream.usage).to.deep.equal(tokenUsage({ inputOther: 10, output: 3 }));
      expect(stream.finishReason).to.equal('stop');
      expect(stream.traceId).to.equal(undefined);
      const request = ctx.server.lastRequest;
      expect(request.method).to.equal('POST');
      expect(request.path).to.equal('/v1/chat/completions');
      expect(request.headers['authorization']).to.equal(`Bearer ${TEST_KEY}`);
    });

    it('reads usage with cached prompt tokens as cache reads', async () => {
      ctx.server.reply({
        type: 'stream',
        chunks: [
          completionChunk({ delta: { content: 'ok' }, finishReason: 'stop' }),
          usageChunk({ prompt_tokens: 100, completion_tokens: 7, prompt_tokens_details: { cached_tokens: 64 } }),
        ],
      });
      const stream = await provider().generate('', [], [user('hi')]);
      await collect(stream);
      expect(stream.usage).to.deep.equal(tokenUsage({ inputOther: 36, output: 7, inputCacheRead: 64 }));
    });

    it('normalises finish reasons', async () => {
      for (const [sent, expected] of [['length', 'length'], ['content_filter', 'content_filter'], ['function_call', 'tool_calls'], ['eos_token', 'other']]) {
        ctx.server.reply({ type: 'stream', chunks: [completionChunk({ delta: { content: 'x' }, finishReason: sent! })] });
        const stream = await provider().generate('', [], [user('hi')]);
        await collect(stream);
        expect(stream.finishReason, sent).to.equal(expected);
      }
    });

    it('streams reasoning as think parts under `reasoningKey` (empty deltas dropped), and ignores it otherwise', async () => {
      const chunks = [
        completionChunk({ delta: { reasoning_content: '' } }),
        completionChunk({ delta: { reasoning_content: 'Let me ' } }),
        completionChunk({ delta: { reasoning_content: 'think.' } }),
        completionChunk({ delta: { content: 'Four.' }, finishReason: 'stop' }),
      ];
      ctx.server.reply({ type: 'stream', chunks }, { type: 'stream', chunks });
      expect(await collect(await provider({ reasoningKey: 'reasoning_content' }).generate('', [], [user('2+2?')]))).to.deep.equal([
        thinkPart('Let me '),
        thinkPart('think.'),
        textPart('Four.'),
      ]);
      expect(await collect(await provider().generate('', [], [user('2+2?')]))).to.deep.equal([textPart('Four.')]);
    });

    it('streams a refusal as text', async () => {
      ctx.server.reply({ type: 'stream', chunks: [completionChunk({ delta: { refusal: "I can't help with that." }, finishReason: 'stop' })] });
      expect(await collect(await provider().generate('', [], [user('hi')]))).to.deep.equal([textPart("I can't help with that.")]);
    });

    it('assembles two interleaved parallel tool calls by index, never mixing them', async () => {
      ctx.server.reply({
        type: 'stream',
        chunks: [
          completionChunk({ delta: { role: 'assistant', content: null } }),
          toolCallChunk({ index: 0, id: 'call_add', type: 'function', function: { name: 'add', arguments: '' } }),
          toolCallChunk({ index: 1, id: 'call_mul', type: 'function', function: { name: 'multiply', arguments: '{"a": 4' } }),
          toolCallChunk({ index: 0, function: { arguments: '{"a": 2,' } }),
          toolCallChunk({ index: 1, function: { arguments: ', "b": 5}' } }),
          toolCallChunk({ index: 0, function: { arguments: ' "b": 3}' } }),
          completionChunk({ delta: {}, finishReason: 'tool_calls' }),
          usageChunk({ prompt_tokens: 20, completion_tokens: 9 }),
        ],
      });
      const parts: unknown[] = [];
      const result = await generate({ provider: provider(), systemPrompt: '', history: [user('2+3 and 4*5')], onMessagePart: (part) => void parts.push(part) });
      expect(result.message.toolCalls).to.deep.equal([toolCall('call_add', 'add', '{"a": 2, "b": 3}'), toolCall('call_mul', 'multiply', '{"a": 4, "b": 5}')]);
      expect(result.finishReason).to.equal('tool_calls');
      expect(parts).to.deep.equal([
        toolCall('call_add', 'add', ''),
        toolCallPart('{"a": 2,'),
        toolCallPart(' "b": 3}'),
        toolCall('call_mul', 'multiply', '{"a": 4, "b": 5}'),
      ]);
    });

    it('takes a new id at a used index as a new call (index 0 for every call, as Ollama sends them), with or without text between', async () => {
      for (const between of [[], [completionChunk({ delta: { content: 'and' } })]]) {
        ctx.server.reply({
          type: 'stream',
          chunks: [
            toolCallChunk({ index: 0, id: 'a', type: 'function', function: { name: 'f', arguments: '{"v":1}' } }),
            ...between,
            toolCallChunk({ index: 0, id: 'b', type: 'function', function: { name: 'f', arguments: '{"v":' } }),
            toolCallChunk({ index: 0, function: { arguments: '2}' } }),
            completionChunk({ finishReason: 'tool_calls' }),
          ],
        });
        const result = await generate({ provider: provider(), systemPrompt: '', history: [user('two calls')] });
        expect(result.message.toolCalls).to.deep.equal([toolCall('a', 'f', '{"v":1}'), toolCall('b', 'f', '{"v":2}')]);
      }
    });

    it('reads SSE in any form the server writes it: comments, CRLF, multi-line data, events split across writes', async () => {
      const body = [
        ': keep-alive\r\n\r\n',
        `event: chunk\r\ndata: ${JSON.stringify(completionChunk({ delta: { content: 'Grüße ' } }))}\r\n\r\n`,
        `data: {"id":"chatcmpl-test","object":"chat.completion.chunk",\ndata: "choices":[{"index":0,"delta":{"content":"😀"},"finish_reason":null}]}\n\n`,
        `data: ${JSON.stringify(completionChunk({ delta: {}, finishReason: 'stop' }))}\n\n`,
        'data: [DONE]\n\n',
      ].join('');
      ctx.server.reply(async (_request, response) => {
        response.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
        const bytes = Buffer.from(body);
        for (let offset = 0; offset < bytes.length; offset += 7) {
          response.write(bytes.subarray(offset, offset + 7));
          await new Promise((resolve) => setImmediate(resolve));
        }
        response.end();
      });
      const stream = await provider().generate('', [], [user('hi')]);
      expect(await collect(stream)).to.deep.equal([textPart('Grüße '), textPart('😀')]);
      expect(stream.finishReason).to.equal('stop');
    });

    it('gives a tool call without an id a generated one', async () => {
      ctx.server.reply({
        type: 'stream',
        chunks: [toolCallChunk({ index: 0, type: 'function', function: { name: 'now', arguments: '{}' } }), completionChunk({ finishReason: 'tool_calls' })],
      });
      const result = await generate({ provider: provider(), systemPrompt: '', history: [user('time?')] });
      const [call] = result.message.toolCalls!;
      expect(call!.function).to.deep.equal({ name: 'now', arguments: '{}' });
      expect(call!.id).to.match(/^[0-9a-f-]{36}$/);
    });

    it('has the trace id header right after generate()', async () => {
      ctx.server.reply(textReply(['hi'], { headers: { 'x-trace-id': 'trace-openai-1' } }));
      const stream = await provider().generate('', [], [user('hi')]);
      expect(stream.traceId).to.equal('trace-openai-1');
      await collect(stream);
    });

    it('can be read only once', async () => {
      const stream = await provider().generate('', [], [user('hi')]);
      await collect(stream);
      const second = await drain(stream);
      expect(ChatProviderError.isInstance(second.error)).to.equal(true);
    });

    it('lets a slow consumer take its time: only waiting for the server counts towards the timeout', async () => {
      ctx.server.reply(textReply(['a', 'b', 'c']));
      const parts = [];
      for await (const part of await provider({ timeoutMs: 100 }).generate('', [], [user('hi')])) {
        parts.push(part);
        await delay(150);
      }
      expect(parts).to.have.length(3);
    });
  });

  describe('failures', () => {
    it('malformed SSE data: a ChatProviderError that says so, after the good parts', async () => {
      ctx.server.reply({ type: 'stream', chunks: [completionChunk({ delta: { content: 'fine' } }), '{"id": "x", this is not json'] });
      const { parts, error } = await drain(await provider().generate('', [], [user('hi')]));
      expect(parts).to.deep.equal([textPart('fine')]);
      expect((error as Error).constructor).to.equal(ChatProviderError);
      expect((error as Error).message).to.match(/malformed stream data/);
    });

    it('a server that closes the socket in the middle of an event: APIConnectionError after the whole events, the torn one dropped', async () => {
      ctx.server.reply(async (_request, response) => {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.write(`data: ${JSON.stringify(completionChunk({ delta: { content: 'Hel' } }))}\n\n`);
        response.write(`data: ${JSON.stringify(completionChunk({ delta: { content: 'lo' } })).slice(0, 40)}`);
        await new Promise((resolve) => setImmediate(resolve));
        response.socket?.destroy();
      });
      const { parts, error } = await drain(await provider().generate('', [], [user('hi')]));
      expect(parts).to.deep.equal([textPart('Hel')]);
      expect(APIConnectionError.isInstance(error), String(error)).to.equal(true);
    });

    it('a 200 with no event at all under a content type that is not an event stream: a ChatProviderError naming it', async () => {
      ctx.server.reply((_request, response) => {
        response.writeHead(200, { 'content-type': 'text/plain' });
        response.end('upstream says hello\n');
      });
      const { error } = await drain(await provider().generate('', [], [user('hi')]));
      expect(ChatProviderError.isInstance(error) && !isRetryableError(error), String(error)).to.equal(true);
      expect((error as Error).message).to.include('"text/plain" and sent no event');
    });

    it('a chunk that is JSON but no object: a ChatProviderError', async () => {
      ctx.server.reply({ type: 'stream', chunks: ['[1, 2]'] });
      const { error } = await drain(await provider().generate('', [], [user('hi')]));
      expect((error as Error).message).to.match(/not a JSON object: \[1,2\]/);
    });

    it('an error event in the stream: the error its type stands for (server_error: a retryable 500), with its message', async () => {
      ctx.server.reply({ type: 'stream', chunks: [completionChunk({ delta: { content: 'a' } }), { error: { message: 'The engine is overloaded', type: 'server_error' } }] });
      const { parts, error } = await drain(await provider().generate('', [], [user('hi')]));
      expect(parts).to.have.length(1);
      expect(error).to.include({ statusCode: 500 });
      expect(isRetryableError(error)).to.equal(true);
      expect((error as Error).message).to.equal('The Chat Completions stream sent an error (server_error): The engine is overloaded');
    });

    it('a disconnect mid-stream: APIConnectionError after the parts that arrived', async () => {
      ctx.server.reply({ type: 'stream', chunks: [completionChunk({ delta: { content: 'Hel' } }), completionChunk({ delta: { content: 'lo' } })], done: false, then: 'destroy' });
      const { parts, error } = await drain(await provider().generate('', [], [user('hi')]));
      expect(parts).to.deep.equal([textPart('Hel'), textPart('lo')]);
      expect(APIConnectionError.isInstance(error), String(error)).to.equal(true);
    });

    it('a stream that ends cleanly but without a finish_reason: APIConnectionError', async () => {
      ctx.server.reply({ type: 'stream', chunks: [completionChunk({ delta: { content: 'Hel' } })], done: false });
      const { error } = await drain(await provider().generate('', [], [user('hi')]));
      expect(APIConnectionError.isInstance(error)).to.equal(true);
      expect((error as Error).message).to.match(/no finish_reason/);
    });

    it('an HTTP 200 with an HTML page (a wrong base URL, a captive portal): a ChatProviderError naming the content type, not retried', async () => {
      ctx.server.reply((_request, response) => {
        response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        response.end('<!DOCTYPE html><html><head><title>Sign in</title></head><body>Welcome</body></html>');
      });
      const error = await rejection(provider().generate('', [], [user('hi')]));
      expect(ChatProviderError.isInstance(error), String(error)).to.equal(true);
      expect(isRetryableError(error)).to.equal(false);
      expect((error as Error).message).to.include('text/html').and.include('<!DOCTYPE html><html><head><title>Sign in');
      expect((error as Error).message).not.to.match(/finish_reason/);
      expect(await closedWithin(ctx.server.lastRequest.closed)).not.to.equal('open');
    });

    it('an HTTP 200 with a JSON body to a streamed request: a ChatProviderError naming the content type', async () => {
      ctx.server.reply({ type: 'json', body: { id: 'x', object: 'chat.completion', choices: [] } });
      const error = await rejection(provider().generate('', [], [user('hi')]));
      expect(ChatProviderError.isInstance(error) && !isRetryableError(error)).to.equal(true);
      expect((error as Error).message).to.include('application/json');
    });

    it('429 with retry-after: APIStatusError with the wait, and the SDK does not retry by itself', async () => {
      ctx.server.reply({
        type: 'json',
        status: 429,
        body: { error: { message: 'Rate limit reached', type: 'requests' } },
        headers: { 'retry-after': '2', 'x-request-id': 'req-429' },
      });
      const error = (await rejection(provider().generate('', [], [user('hi')]))) as APIStatusError;
      expect(APIStatusError.isInstance(error)).to.equal(true);
      expect(error).to.include({ statusCode: 429, retryAfterSeconds: 2, requestId: 'req-429', message: '429 Rate limit reached' });
      expect(ctx.server.requests).to.have.length(1);
    });

    it('500 with request id and trace id headers', async () => {
      ctx.server.reply({ type: 'json', status: 500, body: { error: { message: 'Internal error' } }, headers: { 'x-request-id': 'req-500', 'x-trace-id': 'trace-500' } });
      const error = (await rejection(provider().generate('', [], [user('hi')]))) as APIStatusError;
      expect(error).to.be.instanceOf(APIStatusError);
      expect(error).to.include({ statusCode: 500, requestId: 'req-500', traceId: 'trace-500', retryAfterSeconds: undefined });
    });

    it('retries inside the SDK only when `maxRetries` says so', async () => {
      ctx.server.reply({ type: 'json', status: 500, body: { error: { message: 'flaky' } }, headers: { 'retry-after-ms': '1' } }, textReply(['ok']));
      expect(await collect(await provider({ maxRetries: 1 }).generate('', [], [user('hi')]))).to.deep.equal([textPart('ok')]);
      expect(ctx.server.requests).to.have.length(2);
    });

    it('a server slower than the timeout to answer: APITimeoutError', async () => {
      ctx.server.reply({ ...textReply(['late']), headerDelayMs: 2_000 });
      const started = Date.now();
      const error = await rejection(provider({ timeoutMs: 150 }).generate('', [], [user('hi')]));
      expect(APITimeoutError.isInstance(error), String(error)).to.equal(true);
      expect(Date.now() - started).to.be.below(1_500);
      expect(await closedWithin(ctx.server.lastRequest.closed)).to.equal('aborted');
    });

    it('a stream that stalls longer than the timeout: APITimeoutError, and the request is closed', async () => {
      ctx.server.reply({ type: 'stream', chunks: [completionChunk({ delta: { content: 'Hel' } })], done: false, then: 'hang' });
      const { parts, error } = await drain(await provider({ timeoutMs: 150 }).generate('', [], [user('hi')]));
      expect(parts).to.deep.equal([textPart('Hel')]);
      expect(APITimeoutError.isInstance(error), String(error)).to.equal(true);
      expect((error as Error).message).to.match(/sent nothing for 150 ms/);
      expect(await closedWithin(ctx.server.lastRequest.closed)).to.equal('aborted');
    });

    it('a refused connection: APIConnectionError with the reason', async () => {
      const port = await closedPort();
      const error = await rejection(new OpenAIChatProvider({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: TEST_KEY, model: 'm' }).generate('', [], [user('hi')]));
      expect(APIConnectionError.isInstance(error)).to.equal(true);
      expect((error as Error).message).to.match(/^Connection error\. \(.*ECONNREFUSED/);
    });

    it('an audio part it cannot send rejects before any request', async () => {
      const error = await rejection(provider().generate('', [], [{ role: 'user', content: [{ type: 'video_url', videoUrl: { url: 'https://v' } }] }]));
      expect(ChatProviderError.isInstance(error)).to.equal(true);
      expect(ctx.server.requests).to.have.length(0);
    });
  });

  describe('abort', () => {
    it('mid-stream: the stream rejects with the reason and the server sees the connection close', async () => {
      ctx.server.reply({ type: 'stream', chunks: [completionChunk({ delta: { content: 'Hel' } })], done: false, then: 'hang' });
      const controller = new AbortController();
      const stream = await provider().generate('', [], [user('hi')], { signal: controller.signal });
      const reason = new Error('user pressed Ctrl-C');
      const parts = [];
      let error: unknown;
      try {
        for await (const part of stream) {
          parts.push(part);
          controller.abort(reason);
        }
      } catch (caught) {
        error = caught;
      }
      expect(parts).to.deep.equal([textPart('Hel')]);
      expect(error).to.equal(reason);
      expect(await closedWithin(ctx.server.lastRequest.closed)).to.equal('aborted');
    });

    it('while waiting for the next chunk: the pending read rejects with the reason', async () => {
      ctx.server.reply({ type: 'stream', chunks: [completionChunk({ delta: { content: 'Hel' } })], done: false, then: 'hang' });
      const controller = new AbortController();
      const stream = await provider().generate('', [], [user('hi')], { signal: controller.signal });
      const iterator = stream[Symbol.asyncIterator]();
      await iterator.next();
      const pending = iterator.next();
      setTimeout(() => controller.abort('stop'), 20);
      expect(await rejection(pending)).to.equal('stop');
      expect(await closedWithin(ctx.server.lastRequest.closed)).to.equal('aborted');
    });

    it('before the response: generate rejects with the reason and the request is closed', async () => {
      ctx.server.reply({ ...textReply(['late']), headerDelayMs: 2_000 });
      const controller = new AbortController();
      const pending = provider().generate('', [], [user('hi')], { signal: controller.signal });
      setTimeout(() => controller.abort('cancelled'), 50);
      expect(await rejection(pending)).to.equal('cancelled');
      expect(await closedWithin(ctx.server.lastRequest.closed)).to.equal('aborted');
    });

    it('an aborted signal sends nothing', async () => {
      const controller = new AbortController();
      controller.abort('early');
      expect(await rejection(provider().generate('', [], [user('hi')], { signal: controller.signal }))).to.equal('early');
      await delay(20);
      expect(ctx.server.requests).to.have.length(0);
    });

    it('stopping the iteration early cancels the request', async () => {
      ctx.server.reply({ type: 'stream', chunks: [completionChunk({ delta: { content: 'Hel' } })], done: false, then: 'hang' });
      const stream = await provider().generate('', [], [user('hi')]);
      for await (const part of stream) {
        expect(part).to.deep.equal(textPart('Hel'));
        break;
      }
      expect(await closedWithin(ctx.server.lastRequest.closed)).to.equal('aborted');
    });
  });

  describe('configuration', () => {
    it('sends default headers and uses a custom fetch', async () => {
      let calls = 0;
      const counting: typeof fetch = (input, init) => {
        calls++;
        return fetch(input, init);
      };
      await collect(await provider({ defaultHeaders: { 'x-app': 'kosong-test' }, fetch: counting }).generate('', [], [user('hi')]));
      expect(calls).to.equal(1);
      expect(ctx.server.lastRequest.headers['x-app']).to.equal('kosong-test');
    });

    it('uses an existing OpenAI client as it is configured', async () => {
      const client = new OpenAI({ apiKey: 'sk-client-key-987654', baseURL: ctx.server.baseURL, maxRetries: 5 });
      ctx.server.reply({ type: 'json', status: 503, body: { error: { message: 'down' } } });
      const error = await rejection(new OpenAIChatProvider({ client, model: 'gpt-client' }).generate('', [], [user('hi')]));
      expect(error).to.be.instanceOf(APIStatusError);
      expect(ctx.server.requests, 'the provider turns the SDK retries off per request').to.have.length(1);
      expect(ctx.server.lastRequest.headers['authorization']).to.equal('Bearer sk-client-key-987654');
      expect((ctx.server.lastRequest.body as { model: string }).model).to.equal('gpt-client');
    });

    it('needs an API key or a client, not a client and connection options', () => {
      expect(() => new OpenAIChatProvider({ model: 'm' })).to.throw(ChatProviderError, /needs an `apiKey` \(or an OpenAI `client`\)/);
      const client = new OpenAI({ apiKey: 'x', baseURL: 'http://127.0.0.1:1/v1' });
      expect(() => new OpenAIChatProvider({ model: 'm', client, apiKey: 'y', baseURL: 'z' })).to.throw(ChatProviderError, /either `client` or `apiKey`, `baseURL`/);
    });

    it('is immutable: withThinking and withGenerationOptions return configured copies sharing the client', async () => {
      const base = provider({ generation: { temperature: 0.5 } });
      const high = base.withThinking('high').withGenerationOptions({ maxCompletionTokens: 100 });
      expect(base.thinkingEffort).to.equal(undefined);
      expect(base.generationOptions).to.deep.equal({ temperature: 0.5 });
      expect(high).to.be.instanceOf(OpenAIChatProvider);
      expect(high.generationOptions).to.deep.equal({ temperature: 0.5, maxCompletionTokens: 100 });
      await collect(await high.generate('', [], [user('hi')]));
      expect(ctx.server.lastRequest.body).to.include({ reasoning_effort: 'high', temperature: 0.5, max_completion_tokens: 100 });
      expect(high.baseURL).to.equal(base.baseURL);
    });

    it("keeps keys out of the SDK's own logs when they are turned on", async () => {
      const lines: string[] = [];
      const log = (...args: unknown[]): void => void lines.push(args.map((arg) => (typeof arg === 'string' ? arg : JSON.stringify(arg))).join(' '));
      const logger = { debug: log, info: log, warn: log, error: log };
      const p = provider({ logLevel: 'debug', logger, defaultHeaders: { 'x-api-key': 'header-secret-42' } });
      await collect(await p.generate('', [], [user('hi')]));
      ctx.server.reply({ type: 'json', status: 401, body: { error: { message: 'Incorrect API key' } } });
      await rejection(p.generate('', [], [user('hi')]));
      expect(lines.length).to.be.above(3);
      expect(lines.join('\n')).to.contain('authorization').and.not.contain(TEST_KEY).and.not.contain('header-secret-42');
    });

    it('redacts credential-like default headers from errors too', async () => {
      ctx.server.reply({ type: 'json', status: 403, body: { error: { message: 'header-secret-42 is not allowed' } } });
      const error = (await rejection(provider({ defaultHeaders: { 'x-api-key': 'header-secret-42' } }).generate('', [], [user('hi')]))) as Error;
      expect(error.message).to.equal('403 [REDACTED] is not allowed');
    });

    it('keeps an Azure-style `api-key` header out of an error whose response echoes it, headers and body', async () => {
      const azureKey = 'azure-key-5b7d9f1e3a';
      ctx.server.reply((request, response) => {
        const echoed = String(request.headers['api-key']);
        response.writeHead(401, { 'content-type': 'application/json', 'api-key': echoed, 'x-echo': `api-key=${echoed}` });
        response.end(JSON.stringify({ error: { message: 'Access denied due to invalid subscription key.', key: echoed } }));
      });
      const error = (await rejection(provider({ defaultHeaders: { 'api-key': azureKey } }).generate('', [], [user('hi')]))) as APIStatusError;
      expect(ctx.server.lastRequest.headers['api-key']).to.equal(azureKey);
      expect(error).to.include({ statusCode: 401, message: '401 Access denied due to invalid subscription key.' });
      expect(error.cause, 'the SDK error is kept, redacted').to.be.instanceOf(Error);
      expect(inspect(error, { depth: Infinity, showHidden: true })).to.not.contain(azureKey.slice(1)).and.not.contain(TEST_KEY.slice(1));
      expect(JSON.stringify(error)).to.not.contain(azureKey.slice(1));
    });

    it('never shows the API key when logged or serialised', () => {
      const p = provider().withThinking('low');
      expect(inspect(p, { depth: 10 })).to.not.contain(TEST_KEY);
      expect(JSON.stringify(p)).to.not.contain(TEST_KEY);
      expect(JSON.parse(JSON.stringify(p))).to.deep.equal({ name: 'openai', modelName: 'gpt-test', baseURL: ctx.server.baseURL, thinkingEffort: 'low' });
    });
  });
});
