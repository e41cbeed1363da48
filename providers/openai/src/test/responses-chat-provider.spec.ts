import type { ServerResponse } from 'node:http';
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

import { OpenAIResponsesChatProvider } from '../index.js';
import { encodeResponsesStream, errorEvent, responseEvents, responseFailedEvent, responsesReply, type RecordedRequest } from '../testing/index.js';
import { collect, delay, drain, rejection, TEST_KEY, user } from './support.js';
import { lastBody, useResponsesServer } from './responses-support.js';

/** How the exchange ended for the server, or `open` if it has not within `ms`. */
function closedWithin(closed: Promise<'completed' | 'aborted'>, ms = 2_000): Promise<string> {
  return Promise.race([closed, delay(ms).then(() => 'open')]);
}

/** The events of a response that is still streaming its first message: created, the item added, one delta. */
function openingEvents(text = 'Hel'): object[] {
  return responseEvents([{ type: 'message', text: [text] }]).slice(0, 5);
}

describe('OpenAIResponsesChatProvider over HTTP', () => {
  const ctx = useResponsesServer();

  describe('streaming', () => {
    it('streams text deltas; the id is the response id; usage and finish reason; POST /v1/responses with the key', async () => {
      ctx.server.reply(responsesReply([{ type: 'message', text: ['Hello', ', ', 'world!'], id: 'msg_item' }], { id: 'resp_42', usage: { input_tokens: 20, output_tokens: 3 } }));
      const stream = await ctx.provider().generate('', [], [user('hi')]);
      expect(await collect(stream)).to.deep.equal([textPart('Hello'), textPart(', '), textPart('world!')]);
      expect(stream).to.include({ id: 'resp_42', finishReason: 'stop' });
      expect(stream.usage).to.deep.equal(tokenUsage({ inputOther: 20, output: 3 }));
      const request = ctx.server.lastRequest;
      expect(request.method).to.equal('POST');
      expect(request.path).to.equal('/v1/responses');
      expect(request.headers['authorization']).to.equal(`Bearer ${TEST_KEY}`);
      expect(lastBody(ctx.server)).to.include({ stream: true, store: false, model: 'gpt-5.1' });
    });

    it('streams reasoning as think parts closed by their encrypted content, then text and parallel calls', async () => {
      ctx.server.reply(
        responsesReply(
          [
            { type: 'reasoning', summary: [['Two sums.']], encrypted: 'enc_A' },
            { type: 'message', text: ['Both at once.'] },
            { type: 'function_call', callId: 'call_1', name: 'add', arguments: ['{"a":1,', '"b":2}'] },
            { type: 'function_call', callId: 'call_2', name: 'add', arguments: ['{"a":3,"b":4}'] },
          ],
          { usage: { input_tokens: 100, output_tokens: 40, input_tokens_details: { cached_tokens: 64 }, output_tokens_details: { reasoning_tokens: 30 } } },
        ),
      );
      const result = await generate({ provider: ctx.provider().withThinking('high'), systemPrompt: '', history: [user('add')] });
      expect(result.message.content).to.deep.equal([thinkPart('Two sums.', 'enc_A'), textPart('Both at once.')]);
      expect(result.message.toolCalls).to.deep.equal([toolCall('call_1', 'add', '{"a":1,"b":2}'), toolCall('call_2', 'add', '{"a":3,"b":4}')]);
      expect(result.finishReason).to.equal('tool_calls');
      expect(result.usage).to.deep.equal(tokenUsage({ inputOther: 36, output: 40, inputCacheRead: 64 }));
    });

    it('interleaved argument deltas of two calls over the wire are never mixed', async () => {
      const added = (output_index: number, call_id: string): object => ({
        type: 'response.output_item.added',
        output_index,
        item: { id: `fc_${output_index}`, type: 'function_call', call_id, name: 'add', arguments: '' },
      });
      const delta = (output_index: number, text: string): object => ({ type: 'response.function_call_arguments.delta', output_index, item_id: `fc_${output_index}`, delta: text });
      const done = (output_index: number, call_id: string, args: string): object => ({
        type: 'response.output_item.done',
        output_index,
        item: { id: `fc_${output_index}`, type: 'function_call', call_id, name: 'add', arguments: args },
      });
      ctx.server.reply({
        type: 'stream',
        chunks: [
          added(0, 'call_a'),
          added(1, 'call_b'),
          delta(1, '{"a":10,'),
          delta(0, '{"a":1,'),
          delta(1, '"b":20}'),
          delta(0, '"b":2}'),
          done(1, 'call_b', '{"a":10,"b":20}'),
          done(0, 'call_a', '{"a":1,"b":2}'),
          { type: 'response.completed', response: { id: 'resp_x', status: 'completed', output: [], usage: null } },
        ],
      });
      const result = await generate({ provider: ctx.provider(), systemPrompt: '', history: [user('go')] });
      expect(result.message.toolCalls).to.deep.equal([toolCall('call_a', 'add', '{"a":1,"b":2}'), toolCall('call_b', 'add', '{"a":10,"b":20}')]);
      expect(result.usage).to.equal(undefined);
    });

    it('huge arguments (8 MiB in 1 KiB deltas) arrive whole', async () => {
      const piece = 'x'.repeat(1024);
      const fragments = ['{"blob":"', ...Array.from({ length: 8 * 1024 }, () => piece), '"}'];
      ctx.server.reply(responsesReply([{ type: 'function_call', callId: 'big', name: 'store', arguments: fragments }]));
      const result = await generate({ provider: ctx.provider(), systemPrompt: '', history: [user('go')] });
      expect(result.message.toolCalls?.[0]?.function.arguments?.length).to.equal(8 * 1024 * 1024 + 11);
    });

    it('incomplete at max_output_tokens: finish reason length, with the text so far', async () => {
      ctx.server.reply(responsesReply([{ type: 'message', text: ['Once upon'] }], { status: 'incomplete', incompleteReason: 'max_output_tokens' }));
      const stream = await ctx.provider().generate('', [], [user('tell')]);
      expect(await collect(stream)).to.deep.equal([textPart('Once upon')]);
      expect(stream.finishReason).to.equal('length');
    });

    it('reads SSE in any form: comments, CRLF, multi-line data, events split across writes, unknown event types', async () => {
      const events = responseEvents([{ type: 'message', text: ['Grüße ', '😀'] }], { id: 'resp_sse' });
      const body = [
        ': keep-alive\r\n\r\n',
        'event: response.some_future_event\r\ndata: {"type":"response.some_future_event","x":1}\r\n\r\n',
        ...events.map((event, index) =>
          index === 2 ? `event: x\ndata: ${JSON.stringify(event).replace(',', ',\ndata: ')}\n\n` : `event: ${(event as { type: string }).type}\r\ndata: ${JSON.stringify(event)}\r\n\r\n`,
        ),
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
      const stream = await ctx.provider().generate('', [], [user('hi')]);
      expect(await collect(stream)).to.deep.equal([textPart('Grüße '), textPart('😀')]);
      expect(stream).to.include({ id: 'resp_sse', finishReason: 'stop' });
    });

    it('30 concurrent requests on one provider: each stream gets its own response, nothing mixed', async () => {
      const echo = (request: RecordedRequest, response: ServerResponse): void => {
        const input = (request.body as { input: { content: { text: string }[] }[] }).input;
        const asked = input[0]!.content[0]!.text;
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.end(encodeResponsesStream(responsesReply([{ type: 'message', text: [asked, ' back'] }, { type: 'function_call', callId: `call_${asked}`, name: 'f', arguments: [`{"n":"${asked}"}`] }], { id: `resp_${asked}` })));
      };
      ctx.server.reply(...Array.from({ length: 30 }, () => echo));
      const provider = ctx.provider();
      const results = await Promise.all(Array.from({ length: 30 }, (_, i) => generate({ provider, systemPrompt: '', history: [user(`q${i}`)] })));
      results.forEach((result, i) => {
        expect(result.id).to.equal(`resp_q${i}`);
        expect(result.message.content).to.deep.equal([textPart(`q${i} back`)]);
        expect(result.message.toolCalls).to.deep.equal([toolCall(`call_q${i}`, 'f', `{"n":"q${i}"}`)]);
      });
    });

    it('can be read only once', async () => {
      const stream = await ctx.provider().generate('', [], [user('hi')]);
      await collect(stream);
      const error = await rejection(collect(stream));
      expect((error as Error).message).to.equal('A Responses stream can be read only once');
    });
  });

  describe('failures', () => {
    it('response.failed mid-stream (server_error): a retryable APIStatusError 500 after the parts that came', async () => {
      ctx.server.reply({ type: 'stream', chunks: [...openingEvents('Hel'), responseFailedEvent('server_error', 'The model had an error')] });
      const { parts, error } = await drain(await ctx.provider().generate('', [], [user('hi')]));
      expect(parts).to.deep.equal([textPart('Hel')]);
      expect(APIStatusError.isInstance(error), String(error)).to.equal(true);
      expect(error).to.include({ statusCode: 500 });
      expect(isRetryableError(error)).to.equal(true);
      expect((error as Error).message).to.include('response.failed (server_error): The model had an error');
    });

    it('an error event: a ChatProviderError with its message (a rate limit is a 429)', async () => {
      ctx.server.reply({ type: 'stream', chunks: [...openingEvents(), errorEvent('invalid_request', 'bad input')] }, { type: 'stream', chunks: [errorEvent('rate_limit_exceeded', 'slow down')] });
      const first = (await drain(await ctx.provider().generate('', [], [user('hi')]))).error;
      expect(ChatProviderError.isInstance(first) && !isRetryableError(first), String(first)).to.equal(true);
      expect((first as Error).message).to.equal('The Responses stream sent error (invalid_request): bad input');
      const second = (await drain(await ctx.provider().generate('', [], [user('hi')]))).error;
      expect(second).to.include({ statusCode: 429 });
    });

    it('malformed SSE data: a ChatProviderError that says so, after the good parts', async () => {
      ctx.server.reply({ type: 'stream', chunks: [...openingEvents(), '{"type": "response.output_text.delta", "delta": oops}'] });
      const { parts, error } = await drain(await ctx.provider().generate('', [], [user('hi')]));
      expect(parts).to.deep.equal([textPart('Hel')]);
      expect(ChatProviderError.isInstance(error) && !isRetryableError(error), String(error)).to.equal(true);
      expect((error as Error).message).to.match(/malformed stream data/);
    });

    it('a stream cut mid-event: APIConnectionError after the whole events', async () => {
      ctx.server.reply(async (_request, response) => {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        const events = openingEvents('Hel');
        response.write(events.map((event) => `data: ${JSON.stringify(event)}\n\n`).join(''));
        response.write(`data: ${JSON.stringify(responseEvents([{ type: 'message', text: ['lo'] }])[4]).slice(0, 30)}`);
        await new Promise((resolve) => setImmediate(resolve));
        response.socket?.destroy();
      });
      const { parts, error } = await drain(await ctx.provider().generate('', [], [user('hi')]));
      expect(parts).to.deep.equal([textPart('Hel')]);
      expect(APIConnectionError.isInstance(error), String(error)).to.equal(true);
    });

    it('a stream that ends cleanly without response.completed: APIConnectionError saying so', async () => {
      ctx.server.reply({ type: 'stream', chunks: openingEvents() });
      const { parts, error } = await drain(await ctx.provider().generate('', [], [user('hi')]));
      expect(parts).to.deep.equal([textPart('Hel')]);
      expect(APIConnectionError.isInstance(error), String(error)).to.equal(true);
      expect((error as Error).message).to.include('no response.completed was sent');
    });

    it('an HTTP 200 with an HTML page: a ChatProviderError naming the content type and the Responses API, not retried', async () => {
      ctx.server.reply((_request, response) => {
        response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        response.end('<!DOCTYPE html><html><head><title>Sign in</title></head><body>Welcome</body></html>');
      });
      const error = await rejection(ctx.provider().generate('', [], [user('hi')]));
      expect(ChatProviderError.isInstance(error) && !isRetryableError(error), String(error)).to.equal(true);
      expect((error as Error).message).to.include('text/html').and.include('a Responses API?').and.include('<!DOCTYPE html>');
      expect(await closedWithin(ctx.server.lastRequest.closed)).not.to.equal('open');
    });

    it('429 with retry-after and a request id: APIStatusError; the SDK does not retry by itself', async () => {
      ctx.server.reply({ type: 'json', status: 429, body: { error: { message: 'Rate limit reached', type: 'requests' } }, headers: { 'retry-after': '2', 'x-request-id': 'req-429' } });
      const error = (await rejection(ctx.provider().generate('', [], [user('hi')]))) as APIStatusError;
      expect(APIStatusError.isInstance(error)).to.equal(true);
      expect(error).to.include({ statusCode: 429, retryAfterSeconds: 2, requestId: 'req-429' });
      expect(ctx.server.requests).to.have.length(1);
    });

    it('a 401 that echoes the key: the error says 401 and shows no key anywhere', async () => {
      ctx.server.reply({ type: 'json', status: 401, body: { error: { message: `Incorrect API key provided: ${TEST_KEY}` } }, headers: { 'x-echo': `Bearer ${TEST_KEY}` } });
      const error = (await rejection(ctx.provider().generate('', [], [user('hi')]))) as APIStatusError;
      expect(error).to.include({ statusCode: 401 });
      expect(inspect(error, { depth: 10, showHidden: true })).to.not.include(TEST_KEY);
      expect(error.message).to.include('[REDACTED]');
    });

    it('a server slower than the timeout to answer, or a stream that stalls: APITimeoutError, the request closed', async () => {
      ctx.server.reply({ ...responsesReply([{ type: 'message', text: ['late'] }]), headerDelayMs: 2_000 });
      const late = await rejection(ctx.provider({ timeoutMs: 150 }).generate('', [], [user('hi')]));
      expect(APITimeoutError.isInstance(late), String(late)).to.equal(true);
      expect(await closedWithin(ctx.server.lastRequest.closed)).to.equal('aborted');
      ctx.server.reply({ type: 'stream', chunks: openingEvents(), then: 'hang' });
      const { parts, error } = await drain(await ctx.provider({ timeoutMs: 150 }).generate('', [], [user('hi')]));
      expect(parts).to.deep.equal([textPart('Hel')]);
      expect(APITimeoutError.isInstance(error), String(error)).to.equal(true);
      expect(await closedWithin(ctx.server.lastRequest.closed)).to.equal('aborted');
    });

    it('a part it cannot send (video) rejects before any request', async () => {
      const error = await rejection(ctx.provider().generate('', [], [{ role: 'user', content: [{ type: 'video_url', videoUrl: { url: 'https://v' } }] }]));
      expect(ChatProviderError.isInstance(error)).to.equal(true);
      expect((error as Error).message).to.equal('Cannot send the video of message 0, part 0: the Responses API has no video input');
      expect(ctx.server.requests).to.have.length(0);
    });
  });

  describe('abort', () => {
    it('mid-stream: the stream rejects with the reason and the server sees the connection close', async () => {
      ctx.server.reply({ type: 'stream', chunks: openingEvents(), then: 'hang' });
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

    it('before the response: generate rejects with the reason; an aborted signal sends nothing', async () => {
      ctx.server.reply({ ...responsesReply([{ type: 'message', text: ['late'] }]), headerDelayMs: 2_000 });
      const controller = new AbortController();
      const pending = ctx.provider().generate('', [], [user('hi')], { signal: controller.signal });
      setTimeout(() => controller.abort('cancelled'), 50);
      expect(await rejection(pending)).to.equal('cancelled');
      expect(await closedWithin(ctx.server.lastRequest.closed)).to.equal('aborted');
      const early = new AbortController();
      early.abort('early');
      expect(await rejection(ctx.provider().generate('', [], [user('hi')], { signal: early.signal }))).to.equal('early');
      await delay(20);
      expect(ctx.server.requests).to.have.length(1);
    });

    it('stopping the iteration early cancels the request', async () => {
      ctx.server.reply({ type: 'stream', chunks: openingEvents(), then: 'hang' });
      const stream = await ctx.provider().generate('', [], [user('hi')]);
      for await (const part of stream) {
        expect(part).to.deep.equal(textPart('Hel'));
        break;
      }
      expect(await closedWithin(ctx.server.lastRequest.closed)).to.equal('aborted');
    });
  });

  describe('as a value', () => {
    it('prints and serialises without the key; with… copies share the client and leave the original alone', () => {
      const provider = new OpenAIResponsesChatProvider({ apiKey: TEST_KEY, model: 'gpt-5.1' });
      const thinking = provider.withThinking('max');
      expect(thinking.thinkingEffort).to.equal('xhigh');
      expect(provider.thinkingEffort).to.equal(undefined);
      expect(provider.withThinking('off').thinkingEffort).to.equal('off');
      expect(JSON.stringify(thinking)).to.equal('{"name":"openai-responses","modelName":"gpt-5.1","baseURL":"https://api.openai.com/v1","thinkingEffort":"xhigh"}');
      expect(inspect(thinking, { depth: 10 })).to.not.include(TEST_KEY);
      const tuned = provider.withGenerationOptions({ temperature: 0.3, extraBody: { a: 1 } }).withGenerationOptions({ extraBody: { b: 2 } });
      expect(tuned.generationOptions).to.deep.equal({ temperature: 0.3, extraBody: { a: 1, b: 2 } });
      expect(provider.generationOptions).to.deep.equal({});
    });

    it('needs a key or a client', () => {
      expect(() => new OpenAIResponsesChatProvider({ model: 'gpt-5.1' })).to.throw(ChatProviderError, /needs an `apiKey`/);
    });
  });

  it('a tool-call part list the stream gives is what kosong merges: call, then fragments', async () => {
    ctx.server.reply(responsesReply([{ type: 'function_call', callId: 'c1', name: 'f', arguments: ['{"x":', '1}'] }]));
    const parts = await collect(await ctx.provider().generate('', [], [user('go')]));
    expect(parts).to.deep.equal([toolCall('c1', 'f', null), toolCallPart('{"x":'), toolCallPart('1}')]);
  });
});
