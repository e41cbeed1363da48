import { getEventListeners } from 'node:events';
import { inspect } from 'node:util';

import {
  APIConnectionError,
  APIStatusError,
  APITimeoutError,
  ChatProviderError,
  generate,
  imageURLPart,
  textPart,
  thinkPart,
  tokenUsage,
  toolCall,
} from '@kosong/core';
import { expect } from 'chai';

import { GeminiChatProvider } from '../index.js';
import { errorBody, textReply, wireChunk, wireFunctionCall, wireText, wireThought, type CustomReply } from '../testing/index.js';
import { closedPort, closedWithin, collect, delay, drain, reachableText, rejection, TEST_KEY, user, useServer } from './support.js';

describe('GeminiChatProvider over HTTP', () => {
  const ctx = useServer();

  describe('streaming', () => {
    it('streams text deltas, then has the response id, usage and finish reason; authenticates with the key', async () => {
      ctx.server.reply(textReply(['Hello', ', ', 'world!'], { responseId: 'resp-42' }));
      const stream = await ctx.provider().generate('', [], [user('hi')]);
      expect(await collect(stream)).to.deep.equal([textPart('Hello'), textPart(', '), textPart('world!')]);
      expect(stream.id).to.equal('resp-42');
      expect(stream.usage).to.deep.equal(tokenUsage({ inputOther: 10, output: 3 }));
      expect(stream.finishReason).to.equal('stop');
      const request = ctx.server.lastRequest;
      expect(request.method).to.equal('POST');
      expect(request.path).to.equal('/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
      expect(request.headers['x-goog-api-key']).to.equal(TEST_KEY);
    });

    it('streams thoughts as think parts before the text, and counts thinking tokens as output', async () => {
      ctx.server.reply({
        type: 'stream',
        events: [
          wireChunk({ parts: [wireThought('Let me '), wireThought('think.')] }),
          wireChunk({ parts: [wireText('Four.')], finishReason: 'STOP', usage: { promptTokenCount: 12, candidatesTokenCount: 2, thoughtsTokenCount: 30 } }),
        ],
      });
      const result = await generate({ provider: ctx.provider().withThinking('low'), systemPrompt: '', history: [user('2+2?')] });
      expect(result.message.content).to.deep.equal([thinkPart('Let me think.'), textPart('Four.')]);
      expect(result.usage).to.deep.equal(tokenUsage({ inputOther: 12, output: 32 }));
    });

    it('reads cached prompt tokens as cache reads (taken out of inputOther) and counts tool-use prompt tokens as input', async () => {
      ctx.server.reply(textReply(['ok'], { usage: { promptTokenCount: 100, cachedContentTokenCount: 64, toolUsePromptTokenCount: 5, candidatesTokenCount: 7 } }));
      const stream = await ctx.provider().generate('', [], [user('hi')]);
      await collect(stream);
      expect(stream.usage).to.deep.equal(tokenUsage({ inputOther: 41, inputCacheRead: 64, output: 7 }));
    });

    it('keeps the latest usage of the stream (each event carries the running total)', async () => {
      ctx.server.reply({
        type: 'stream',
        events: [
          wireChunk({ parts: [wireText('a')], usage: { promptTokenCount: 9, candidatesTokenCount: 1 } }),
          wireChunk({ parts: [wireText('b')], finishReason: 'STOP', usage: { promptTokenCount: 9, candidatesTokenCount: 2 } }),
        ],
      });
      const stream = await ctx.provider().generate('', [], [user('hi')]);
      await collect(stream);
      expect(stream.usage).to.deep.equal(tokenUsage({ inputOther: 9, output: 2 }));
    });

    it('normalises finish reasons', async () => {
      for (const [sent, expected] of [
        ['MAX_TOKENS', 'length'],
        ['SAFETY', 'content_filter'],
        ['RECITATION', 'content_filter'],
        ['PROHIBITED_CONTENT', 'content_filter'],
        ['MALFORMED_FUNCTION_CALL', 'other'],
        ['SOMETHING_NEW', 'other'],
      ]) {
        ctx.server.reply({ type: 'stream', events: [wireChunk({ parts: [wireText('x')], finishReason: sent! })] });
        const stream = await ctx.provider().generate('', [], [user('hi')]);
        await collect(stream);
        expect(stream.finishReason, sent).to.equal(expected);
      }
    });

    it('streams parallel function calls whole, in order: API ids kept, made-up ids otherwise, the thought signature in extras', async () => {
      ctx.server.reply({
        type: 'stream',
        events: [
          wireChunk({ parts: [wireThought('Two lookups.'), wireText('Checking both.')] }),
          wireChunk({
            parts: [wireFunctionCall('add', { a: 2, b: 3 }, { id: 'fc-1', thoughtSignature: 'c2lnLW9uZQ==' }), wireFunctionCall('multiply', { a: 4, b: 5 })],
          }),
          wireChunk({ parts: [wireFunctionCall('now', {})], finishReason: 'STOP' }),
        ],
      });
      const result = await generate({ provider: ctx.provider(), systemPrompt: '', history: [user('2+3, 4*5, time')] });
      const [add, multiply, now] = result.message.toolCalls!;
      expect(add).to.deep.equal(toolCall('fc-1', 'add', '{"a":2,"b":3}', { thought_signature_b64: 'c2lnLW9uZQ==' }));
      expect(multiply!.id).to.match(/^multiply_[0-9a-f-]{36}$/);
      expect(multiply!.function).to.deep.equal({ name: 'multiply', arguments: '{"a":4,"b":5}' });
      expect(multiply!.extras).to.equal(undefined);
      expect(now!.function.arguments).to.equal('{}');
      expect(now!.id).to.not.equal(multiply!.id);
      expect(result.finishReason).to.equal('tool_calls');
      expect(result.message.content).to.deep.equal([thinkPart('Two lookups.'), textPart('Checking both.')]);
    });

    it('a function call without args gets `{}`', async () => {
      ctx.server.reply({ type: 'stream', events: [wireChunk({ parts: [{ functionCall: { name: 'ping' } }], finishReason: 'STOP' })] });
      const result = await generate({ provider: ctx.provider(), systemPrompt: '', history: [user('ping')] });
      expect(result.message.toolCalls![0]!.function.arguments).to.equal('{}');
    });

    it('huge arguments (8 MiB in one event) arrive whole', async () => {
      const blob = 'x'.repeat(8 * 1024 * 1024);
      ctx.server.reply({ type: 'stream', events: [wireChunk({ parts: [wireFunctionCall('save', { blob })], finishReason: 'STOP' })] });
      const result = await generate({ provider: ctx.provider(), systemPrompt: '', history: [user('save')] });
      expect(result.message.toolCalls![0]!.function.arguments!.length).to.equal(blob.length + '{"blob":""}'.length);
    });

    it('images the model makes arrive as image parts with a data URL', async () => {
      ctx.server.reply({
        type: 'stream',
        events: [wireChunk({ parts: [wireText('Here:'), { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } }], finishReason: 'STOP' })],
      });
      const result = await generate({ provider: ctx.provider(), systemPrompt: '', history: [user('draw')] });
      expect(result.message.content).to.deep.equal([textPart('Here:'), imageURLPart('data:image/png;base64,iVBORw0KGgo=')]);
    });

    it('skips part kinds it does not know (and empty texts, and bare signatures) but keeps what it knows around them', async () => {
      ctx.server.reply({
        type: 'stream',
        events: [
          wireChunk({ parts: [{ executableCode: { language: 'PYTHON', code: 'print(1)' } }, wireText('a'), { somethingNew: { x: 1 } }] }),
          wireChunk({ parts: [{ codeExecutionResult: { outcome: 'OUTCOME_OK', output: '1' } }, 'not a part' as never, null as never, wireText(''), { text: '', thoughtSignature: 'c2ln' }] }),
          wireChunk({ parts: [{ inlineData: { mimeType: 'application/pdf', data: 'JVBE' } }, wireText('b')], finishReason: 'STOP' }),
        ],
      });
      expect(await collect(await ctx.provider().generate('', [], [user('hi')]))).to.deep.equal([textPart('a'), textPart('b')]);
    });

    it('has no trace id unless the server sends `x-trace-id`', async () => {
      ctx.server.reply(textReply(['hi'], { headers: { 'x-trace-id': 'trace-g-1' } }));
      const stream = await ctx.provider().generate('', [], [user('hi')]);
      expect(stream.traceId).to.equal('trace-g-1');
      await collect(stream);
    });

    it('can be read only once', async () => {
      const stream = await ctx.provider().generate('', [], [user('hi')]);
      await collect(stream);
      const second = await drain(stream);
      expect(ChatProviderError.isInstance(second.error)).to.equal(true);
    });

    it('lets a slow consumer take its time: only waiting for the server counts towards the timeout', async () => {
      ctx.server.reply(textReply(['a', 'b', 'c'], { eventDelayMs: 5 }));
      const parts = [];
      for await (const part of await ctx.provider({ timeoutMs: 100 }).generate('', [], [user('hi')])) {
        parts.push(part);
        await delay(150);
      }
      expect(parts).to.have.length(3);
    });

    it('30 concurrent requests on one provider each get their own response', async () => {
      const echo: CustomReply = async (request, response) => {
        const asked = (request.body as { contents: { parts: { text: string }[] }[] }).contents[0]!.parts[0]!.text;
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        for (const text of [`${asked}:`, 'a', 'b']) {
          response.write(`data: ${JSON.stringify(wireChunk({ responseId: `resp-${asked}`, parts: [wireText(text)] }))}\r\n\r\n`);
          await delay(Math.random() * 10);
        }
        response.end(`data: ${JSON.stringify(wireChunk({ responseId: `resp-${asked}`, finishReason: 'STOP' }))}\r\n\r\n`);
      };
      ctx.server.reply(...Array.from({ length: 30 }, () => echo));
      const provider = ctx.provider();
      const results = await Promise.all(
        Array.from({ length: 30 }, async (_, i) => generate({ provider, systemPrompt: '', history: [user(`q${i}`)] })),
      );
      results.forEach((result, i) => {
        expect(result.message.content).to.deep.equal([textPart(`q${i}:ab`)]);
        expect(result.id).to.equal(`resp-q${i}`);
      });
    });

    it('reads events split across network chunks anywhere, and CRLF or LF framing', async () => {
      ctx.server.reply(async (_request, response) => {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        const body = `data: ${JSON.stringify(wireChunk({ parts: [wireText('one')] }))}\n\n: keep-alive comment\r\n\r\ndata: ${JSON.stringify(wireChunk({ parts: [wireText('two')], finishReason: 'STOP' }))}\r\n\r\n`;
        for (let i = 0; i < body.length; i += 7) {
          response.write(body.slice(i, i + 7));
          await delay(0);
        }
        response.end();
      });
      expect(await collect(await ctx.provider().generate('', [], [user('hi')]))).to.deep.equal([textPart('one'), textPart('two')]);
    });
  });

  describe('failures', () => {
    it('malformed SSE data: a ChatProviderError that says so, after the good parts', async () => {
      ctx.server.reply({ type: 'stream', events: [wireChunk({ parts: [wireText('fine')] }), '{"candidates": [ this is not json'] });
      const { parts, error } = await drain(await ctx.provider().generate('', [], [user('hi')]));
      expect(parts).to.deep.equal([textPart('fine')]);
      expect((error as Error).constructor).to.equal(ChatProviderError);
      expect((error as Error).message).to.match(/malformed stream data \(an event that is not JSON\): \{"candidates"/);
    });

    it('an event that is JSON but no object: a ChatProviderError', async () => {
      ctx.server.reply({ type: 'stream', events: ['[1, 2]'] });
      const { error } = await drain(await ctx.provider().generate('', [], [user('hi')]));
      expect((error as Error).message).to.match(/not a JSON object: \[1,2\]/);
    });

    it('a function call without a name, or with arguments that are no object: a ChatProviderError', async () => {
      ctx.server.reply(
        { type: 'stream', events: [wireChunk({ parts: [{ functionCall: { args: {} } }], finishReason: 'STOP' })] },
        { type: 'stream', events: [wireChunk({ parts: [{ functionCall: { name: 'f', args: '{"a":1}' } }], finishReason: 'STOP' })] },
      );
      const first = await drain(await ctx.provider().generate('', [], [user('hi')]));
      expect((first.error as Error).message).to.match(/function call without a name/);
      const second = await drain(await ctx.provider().generate('', [], [user('hi')]));
      expect((second.error as Error).message).to.match(/arguments of function "f" that are not a JSON object/);
    });

    it('an error event in the stream: APIStatusError with its code, after the parts', async () => {
      ctx.server.reply({ type: 'stream', events: [wireChunk({ parts: [wireText('a')] }), errorBody(503, 'UNAVAILABLE', 'The model is overloaded.')] });
      const { parts, error } = await drain(await ctx.provider().generate('', [], [user('hi')]));
      expect(parts).to.have.length(1);
      expect(APIStatusError.isInstance(error), String(error)).to.equal(true);
      expect(error).to.include({ statusCode: 503, message: 'The stream failed: UNAVAILABLE: The model is overloaded.' });
    });

    it('a blocked prompt: a ChatProviderError naming the reason (not an empty response to retry)', async () => {
      ctx.server.reply({ type: 'stream', events: [{ promptFeedback: { blockReason: 'SAFETY' }, usageMetadata: { promptTokenCount: 4 } }] });
      const error = await rejection(generate({ provider: ctx.provider(), systemPrompt: '', history: [user('bad')] }));
      expect((error as Error).constructor).to.equal(ChatProviderError);
      expect((error as Error).message).to.equal('Gemini blocked the prompt (SAFETY)');
    });

    it('a disconnect mid-stream: APIConnectionError after the parts that arrived', async () => {
      ctx.server.reply({ type: 'stream', events: [wireChunk({ parts: [wireText('Hel')] }), wireChunk({ parts: [wireText('lo')] })], then: 'destroy' });
      const { parts, error } = await drain(await ctx.provider().generate('', [], [user('hi')]));
      expect(parts).to.deep.equal([textPart('Hel'), textPart('lo')]);
      expect(APIConnectionError.isInstance(error), String(error)).to.equal(true);
    });

    it('a stream that ends cleanly but without a finishReason, or with a torn last event: APIConnectionError', async () => {
      ctx.server.reply(
        { type: 'stream', events: [wireChunk({ parts: [wireText('Hel')] })] },
        { type: 'stream', events: [wireChunk({ parts: [wireText('Hel')] })], trailer: `data: ${JSON.stringify(wireChunk({ finishReason: 'STOP' })).slice(0, 30)}` },
      );
      for (let i = 0; i < 2; i++) {
        const { error } = await drain(await ctx.provider().generate('', [], [user('hi')]));
        expect(APIConnectionError.isInstance(error), String(error)).to.equal(true);
        expect((error as Error).message).to.match(/no finishReason/);
      }
    });

    it('an HTML page with status 200: a ChatProviderError naming the content type, before any part', async () => {
      ctx.server.reply({ type: 'body', status: 200, body: '<html><body><h1>Welcome to the hotel Wi-Fi</h1></body></html>' });
      const error = await rejection(ctx.provider().generate('', [], [user('hi')]));
      expect((error as Error).constructor).to.equal(ChatProviderError);
      expect((error as Error).message).to.match(/answered 200 with text\/html, not a stream of server-sent events: <html><body><h1>Welcome/);
    });

    it('a JSON 200 instead of a stream: a ChatProviderError', async () => {
      ctx.server.reply({ type: 'body', status: 200, body: wireChunk({ parts: [wireText('hi')], finishReason: 'STOP' }) });
      const error = await rejection(ctx.provider().generate('', [], [user('hi')]));
      expect((error as Error).message).to.match(/application\/json; charset=UTF-8, not a stream/);
    });

    it('an event longer than the cap (a stream that never ends its line): a ChatProviderError, not all the memory', async function () {
      this.timeout(30_000);
      ctx.server.reply(async (_request, response) => {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        const chunk = 'x'.repeat(1024 * 1024);
        response.write('data: "');
        for (let i = 0; i < 80 && !response.destroyed; i++) {
          if (!response.write(chunk)) await new Promise((resolve) => response.once('drain', resolve));
        }
        response.end();
      });
      const { error } = await drain(await ctx.provider().generate('', [], [user('hi')]));
      expect((error as Error).message).to.match(/more than 67108864 characters of stream data without a line end/);
      expect(await closedWithin(ctx.server.lastRequest.closed)).to.equal('aborted');
    });

    it('400 with a Gemini error body: APIStatusError with its status and message', async () => {
      ctx.server.reply({ type: 'body', status: 400, body: errorBody(400, 'INVALID_ARGUMENT', 'Request contains an invalid argument.') });
      const error = (await rejection(ctx.provider().generate('', [], [user('hi')]))) as APIStatusError;
      expect(APIStatusError.isInstance(error)).to.equal(true);
      expect(error).to.include({ statusCode: 400, message: 'HTTP error (400 INVALID_ARGUMENT): Request contains an invalid argument.' });
      expect(ctx.server.requests).to.have.length(1);
    });

    it('401 and 403 say so', async () => {
      ctx.server.reply(
        { type: 'body', status: 401, body: errorBody(401, 'UNAUTHENTICATED', 'API key not valid. Please pass a valid API key.') },
        { type: 'body', status: 403, body: errorBody(403, 'PERMISSION_DENIED', 'Method doesn\u2019t allow unregistered callers.') },
      );
      const unauthenticated = (await rejection(ctx.provider().generate('', [], [user('hi')]))) as APIStatusError;
      expect(unauthenticated.message).to.equal('Authentication failed (401 UNAUTHENTICATED): API key not valid. Please pass a valid API key.');
      const denied = (await rejection(ctx.provider().generate('', [], [user('hi')]))) as APIStatusError;
      expect(denied).to.include({ statusCode: 403 });
      expect(denied.message).to.match(/^Permission denied \(403 PERMISSION_DENIED\)/);
    });

    it('429 with a RetryInfo detail, or a retry-after header: APIStatusError with the wait; the SDK does not retry', async () => {
      const retryInfo = { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '17s' };
      ctx.server.reply(
        { type: 'body', status: 429, body: errorBody(429, 'RESOURCE_EXHAUSTED', 'Quota exceeded.', [{ '@type': 'type.googleapis.com/google.rpc.QuotaFailure' }, retryInfo]) },
        { type: 'body', status: 429, body: errorBody(429, 'RESOURCE_EXHAUSTED', 'Slow down.'), headers: { 'retry-after': '2', 'x-request-id': 'req-429' } },
      );
      const first = (await rejection(ctx.provider().generate('', [], [user('hi')]))) as APIStatusError;
      expect(first).to.include({ statusCode: 429, retryAfterSeconds: 17, message: 'Rate limit exceeded (429 RESOURCE_EXHAUSTED): Quota exceeded.' });
      const second = (await rejection(ctx.provider().generate('', [], [user('hi')]))) as APIStatusError;
      expect(second).to.include({ statusCode: 429, retryAfterSeconds: 2, requestId: 'req-429' });
      expect(ctx.server.requests).to.have.length(2);
    });

    it('a 502 HTML page from a proxy: APIStatusError with the text of the page', async () => {
      ctx.server.reply({ type: 'body', status: 502, body: '<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center></body></html>' });
      const error = (await rejection(ctx.provider().generate('', [], [user('hi')]))) as APIStatusError;
      expect(error).to.include({ statusCode: 502, message: 'Server error (502 Bad Gateway): 502 Bad Gateway 502 Bad Gateway' });
    });

    it('a huge error body is read only up to a cap', async function () {
      this.timeout(20_000);
      ctx.server.reply(async (_request, response) => {
        response.writeHead(500, { 'content-type': 'application/json' });
        const chunk = 'y'.repeat(1024 * 1024);
        response.write('{"error": {"message": "');
        for (let i = 0; i < 1024 && !response.destroyed; i++) {
          if (!response.write(chunk)) await new Promise((resolve) => response.once('drain', resolve));
        }
        response.end('"}}');
      });
      const error = (await rejection(ctx.provider().generate('', [], [user('hi')]))) as APIStatusError;
      expect(error).to.include({ statusCode: 500 });
      expect(error.message.length).to.be.below(1_000);
      expect(await closedWithin(ctx.server.lastRequest.closed)).to.equal('aborted');
    });

    it('a server slower than the timeout to answer: APITimeoutError, and the request is closed', async () => {
      ctx.server.reply({ ...textReply(['late']), headerDelayMs: 2_000 });
      const started = Date.now();
      const error = await rejection(ctx.provider({ timeoutMs: 150 }).generate('', [], [user('hi')]));
      expect(APITimeoutError.isInstance(error), String(error)).to.equal(true);
      expect(Date.now() - started).to.be.below(1_500);
      expect(await closedWithin(ctx.server.lastRequest.closed)).to.equal('aborted');
    });

    it('a stream that stalls longer than the timeout: APITimeoutError, and the request is closed', async () => {
      ctx.server.reply({ type: 'stream', events: [wireChunk({ parts: [wireText('Hel')] })], then: 'hang' });
      const { parts, error } = await drain(await ctx.provider({ timeoutMs: 150 }).generate('', [], [user('hi')]));
      expect(parts).to.deep.equal([textPart('Hel')]);
      expect(APITimeoutError.isInstance(error), String(error)).to.equal(true);
      expect((error as Error).message).to.match(/sent nothing for 150 ms/);
      expect(await closedWithin(ctx.server.lastRequest.closed)).to.equal('aborted');
    });

    it('a refused connection: APIConnectionError with the reason', async () => {
      const port = await closedPort();
      const provider = new GeminiChatProvider({ baseURL: `http://127.0.0.1:${port}`, apiKey: TEST_KEY, model: 'm' });
      const error = await rejection(provider.generate('', [], [user('hi')]));
      expect(APIConnectionError.isInstance(error), String(error)).to.equal(true);
      expect((error as Error).message).to.match(/ECONNREFUSED/);
    });

    it('a history with nothing to send, or a video, rejects before any request', async () => {
      const empty = await rejection(ctx.provider().generate('', [], [{ role: 'assistant', content: [thinkPart('hmm')] }]));
      expect((empty as Error).message).to.match(/nothing to send/);
      const video = await rejection(ctx.provider().generate('', [], [{ role: 'user', content: [{ type: 'video_url', videoUrl: { url: 'https://v.example/a.mp4' } }] }]));
      expect((video as Error).message).to.match(/does not support video parts/);
      expect(ctx.server.requests).to.have.length(0);
    });
  });

  describe('secrets', () => {
    const echoKey = (status: number): CustomReply => (request, response) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(errorBody(status, 'INVALID_ARGUMENT', `Your key ${String(request.headers['x-goog-api-key'])} is wrong`)));
    };

    it('a server echoing the key in an error body: the key is reachable from no property of the error', async () => {
      ctx.server.reply(echoKey(400));
      const error = await rejection(ctx.provider().generate('', [], [user('hi')]));
      expect(APIStatusError.isInstance(error)).to.equal(true);
      expect((error as Error).message).to.equal('HTTP error (400 INVALID_ARGUMENT): Your key [REDACTED] is wrong');
      expect(reachableText(error)).to.not.contain(TEST_KEY);
      expect(inspect(error, { depth: 20, showHidden: true })).to.not.contain(TEST_KEY);
    });

    it('a key echoed in a stream error event, in malformed data, or in an HTML 200 page: redacted', async () => {
      ctx.server.reply(
        (request, response) => {
          response.writeHead(200, { 'content-type': 'text/event-stream' });
          response.end(`data: ${JSON.stringify(errorBody(500, 'INTERNAL', `key=${String(request.headers['x-goog-api-key'])}`))}\r\n\r\n`);
        },
        (request, response) => {
          response.writeHead(200, { 'content-type': 'text/event-stream' });
          response.end(`data: not json ${String(request.headers['x-goog-api-key'])}\r\n\r\n`);
        },
        (request, response) => {
          response.writeHead(200, { 'content-type': 'text/html' });
          response.end(`<p>${String(request.headers['x-goog-api-key'])}</p>`);
        },
      );
      for (let i = 0; i < 3; i++) {
        const error = await rejection(ctx.provider().generate('', [], [user('hi')]).then((stream) => collect(stream)));
        expect(ChatProviderError.isInstance(error), String(error)).to.equal(true);
        expect((error as Error).message).to.contain('[REDACTED]');
        expect(inspect(error, { depth: 20, showHidden: true }), `case ${i}`).to.not.contain(TEST_KEY);
      }
    });

    it('a key echoed in the request id or trace id header: redacted there too', async () => {
      const echoInHeaders: CustomReply = (request, response) => {
        const key = String(request.headers['x-goog-api-key']);
        response.writeHead(429, { 'content-type': 'application/json', 'x-request-id': `req-${key}`, 'x-trace-id': key });
        response.end(JSON.stringify(errorBody(429, 'RESOURCE_EXHAUSTED', 'slow down')));
      };
      ctx.server.reply(echoInHeaders, (request, response) => {
        response.writeHead(200, { 'content-type': 'text/event-stream', 'x-trace-id': String(request.headers['x-goog-api-key']) });
        response.end(`data: ${JSON.stringify(wireChunk({ parts: [wireText('ok')], finishReason: 'STOP' }))}\r\n\r\n`);
      });
      const error = await rejection(ctx.provider().generate('', [], [user('hi')]));
      expect(error).to.include({ requestId: 'req-[REDACTED]', traceId: '[REDACTED]' });
      expect(reachableText(error)).to.not.contain(TEST_KEY);
      const stream = await ctx.provider().generate('', [], [user('hi')]);
      expect(stream.traceId).to.equal('[REDACTED]');
      await collect(stream);
    });

    it('redacts credential-like default headers and anything shaped like a Google API key', async () => {
      const googleShaped = `AIza${'B'.repeat(35)}`;
      ctx.server.reply({ type: 'body', status: 403, body: errorBody(403, 'PERMISSION_DENIED', `header-secret-42 and ${googleShaped} are not allowed`) });
      const error = (await rejection(ctx.provider({ defaultHeaders: { 'x-goog-user-token': 'header-secret-42' } }).generate('', [], [user('hi')]))) as Error;
      expect(error.message).to.equal('Permission denied (403 PERMISSION_DENIED): [REDACTED] and [REDACTED] are not allowed');
      expect(ctx.server.lastRequest.headers['x-goog-user-token']).to.equal('header-secret-42');
    });

    it('never shows the API key when logged or serialised', () => {
      const provider = ctx.provider().withThinking('low');
      expect(inspect(provider, { depth: 10 })).to.not.contain(TEST_KEY);
      expect(JSON.stringify(provider)).to.not.contain(TEST_KEY);
      expect(JSON.parse(JSON.stringify(provider))).to.deep.equal({ name: 'google_genai', modelName: 'gemini-2.5-flash', vertexAI: false, thinkingEffort: 'low' });
    });
  });

  describe('abort', () => {
    it('mid-stream: the stream rejects with the reason and the server sees the connection close', async () => {
      ctx.server.reply({ type: 'stream', events: [wireChunk({ parts: [wireText('Hel')] })], then: 'hang' });
      const controller = new AbortController();
      const stream = await ctx.provider().generate('', [], [user('hi')], { signal: controller.signal });
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

    it('while waiting for the next event: the pending read rejects with the reason', async () => {
      ctx.server.reply({ type: 'stream', events: [wireChunk({ parts: [wireText('Hel')] })], then: 'hang' });
      const controller = new AbortController();
      const stream = await ctx.provider().generate('', [], [user('hi')], { signal: controller.signal });
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
      const pending = ctx.provider().generate('', [], [user('hi')], { signal: controller.signal });
      setTimeout(() => controller.abort('cancelled'), 50);
      expect(await rejection(pending)).to.equal('cancelled');
      expect(await closedWithin(ctx.server.lastRequest.closed)).to.equal('aborted');
    });

    it('an aborted signal sends nothing', async () => {
      const controller = new AbortController();
      controller.abort('early');
      expect(await rejection(ctx.provider().generate('', [], [user('hi')], { signal: controller.signal }))).to.equal('early');
      await delay(20);
      expect(ctx.server.requests).to.have.length(0);
    });

    it('stopping the iteration early cancels the request', async () => {
      ctx.server.reply({ type: 'stream', events: [wireChunk({ parts: [wireText('Hel')] })], then: 'hang' });
      const stream = await ctx.provider().generate('', [], [user('hi')]);
      for await (const part of stream) {
        expect(part).to.deep.equal(textPart('Hel'));
        break;
      }
      expect(await closedWithin(ctx.server.lastRequest.closed)).to.equal('aborted');
    });

    it('leaves no listener on a long-lived signal after each request, however it ended', async () => {
      const controller = new AbortController();
      ctx.server.reply(textReply(['a']), { type: 'body', status: 500, body: errorBody(500, 'INTERNAL', 'x') }, { type: 'stream', events: [wireChunk({ parts: [wireText('x')] })] });
      await collect(await ctx.provider().generate('', [], [user('hi')], { signal: controller.signal }));
      await rejection(ctx.provider().generate('', [], [user('hi')], { signal: controller.signal }));
      await drain(await ctx.provider().generate('', [], [user('hi')], { signal: controller.signal }));
      for (let i = 0; i < 20; i++) await collect(await ctx.provider().generate('', [], [user('hi')], { signal: controller.signal }));
      expect(getEventListeners(controller.signal, 'abort')).to.have.length(0);
    });
  });

  describe('configuration', () => {
    it('sends default headers, uses a custom fetch, and a given API version', async () => {
      let calls = 0;
      const counting: typeof fetch = (input, init) => {
        calls++;
        return fetch(input, init);
      };
      await collect(await ctx.provider({ defaultHeaders: { 'x-app': 'kosong-test' }, fetch: counting, apiVersion: 'v1alpha' }).generate('', [], [user('hi')]));
      expect(calls).to.equal(1);
      expect(ctx.server.lastRequest.headers['x-app']).to.equal('kosong-test');
      expect(ctx.server.lastRequest.path).to.equal('/v1alpha/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
    });

    it('sends extra request config as it is', async () => {
      await collect(
        await ctx
          .provider({ config: { topK: 20, safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT' as never, threshold: 'BLOCK_NONE' as never }] } })
          .generate('', [], [user('hi')]),
      );
      const body = ctx.server.lastRequest.body as Record<string, unknown>;
      expect(body['generationConfig']).to.deep.equal({ topK: 20 });
      expect(body['safetySettings']).to.deep.equal([{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_NONE' }]);
    });

    it('needs a model and an API key (or a Vertex AI project), and a positive timeout', () => {
      expect(() => new GeminiChatProvider({ model: 'm' })).to.throw(ChatProviderError, /needs an `apiKey`/);
      expect(() => new GeminiChatProvider({ model: 'm', vertexAI: true })).to.throw(ChatProviderError, /needs a `vertexAI.project`/);
      expect(() => new GeminiChatProvider({ model: '', apiKey: TEST_KEY })).to.throw(ChatProviderError, /needs a `model`/);
      expect(() => new GeminiChatProvider({ model: 'm', apiKey: TEST_KEY, timeoutMs: 0 })).to.throw(ChatProviderError, /timeoutMs must be a positive number/);
    });

    it('is immutable: withThinking returns a configured copy sharing the client', async () => {
      const base = ctx.provider();
      const high = base.withThinking('high');
      expect(base.thinkingEffort).to.equal(undefined);
      expect(high.thinkingEffort).to.equal('high');
      expect(high).to.be.instanceOf(GeminiChatProvider);
      await collect(await high.generate('', [], [user('hi')]));
      expect((ctx.server.lastRequest.body as { generationConfig: unknown }).generationConfig).to.deep.equal({ thinkingConfig: { includeThoughts: true, thinkingBudget: 32000 } });
      await collect(await base.generate('', [], [user('hi')]));
      expect((ctx.server.lastRequest.body as { generationConfig: unknown }).generationConfig).to.deep.equal({});
    });

    it('talks to Vertex AI in express mode (API key): the Vertex path, the same body', async () => {
      await collect(await ctx.provider({ vertexAI: true, model: 'gemini-3-pro-preview' }).generate('Be brief.', [], [user('hi')]));
      const request = ctx.server.lastRequest;
      expect(request.path).to.equal('/v1beta1/publishers/google/models/gemini-3-pro-preview:streamGenerateContent?alt=sse');
      expect(request.headers['x-goog-api-key']).to.equal(TEST_KEY);
      expect(request.body).to.deep.include({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }], systemInstruction: { role: 'user', parts: [{ text: 'Be brief.' }] } });
    });

    it('talks to Vertex AI with a project and location (credentials from google-auth-library)', async () => {
      const provider = ctx.provider({
        apiKey: undefined as never,
        vertexAI: {
          project: 'my-project',
          location: 'us-central1',
          googleAuthOptions: { authClient: { getRequestHeaders: async () => new Headers({ authorization: 'Bearer ya29.test-access-token-123' }) } as never },
        },
      });
      await collect(await provider.generate('', [], [user('hi')]));
      expect(ctx.server.lastRequest.path).to.equal('/v1beta1/projects/my-project/locations/us-central1/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
      expect(ctx.server.lastRequest.headers['authorization']).to.equal('Bearer ya29.test-access-token-123');
      expect(provider.vertexAI).to.equal(true);
    });
  });
});
