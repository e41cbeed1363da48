import { Agent, type AgentEvent, APIConnectionError, emptyToolset, generate, step, textPart, thinkPart, toolCall, toolCallPart } from '@kosong/core';
import { feedEveryLineEnd } from '@kosong/core/provider-kit';
import { expect } from 'chai';

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

import { createParser } from 'eventsource-parser';

import { AnthropicChatProvider, REDACTED_THINKING_PREFIX } from '../index.js';
import { blockEvents, encodeEvent, messageDelta, messageStart, messageStop, textReply, type SseEvent } from '../testing/index.js';
import { collect, providerFor, streamFailure, TEST_KEY, user, useServer } from './support.js';

/** The events of a reply as one body, with every line end written as `lineEnd`. */
function wire(events: readonly (SseEvent | string)[], lineEnd: string): string {
  return events.map(encodeEvent).join('').replaceAll('\n', lineEnd);
}

/** How the exchange ended for the server, or `open` if it has not within `ms`. */
function closedWithin(closed: Promise<'completed' | 'aborted'>, ms = 2_000): Promise<string> {
  return Promise.race([closed, new Promise<string>((resolve) => setTimeout(() => resolve('open'), ms))]);
}

describe('AnthropicChatProvider: where a stream ends, and its line ends', () => {
  const ctx = useServer();

  describe('every line end the SSE standard allows (CR, LF, CRLF)', () => {
    for (const [name, lineEnd] of [
      ['CR', '\r'],
      ['CRLF', '\r\n'],
      ['LF', '\n'],
    ] as const) {
      it(`${name}: the whole message, up to its last event (which ends the body)`, async () => {
        const events = textReply(['Hel', 'lo'], { id: 'msg_cr', deltaUsage: { output_tokens: 7 } }).events;
        ctx.server.reply({ type: 'stream', events: [wire(events, lineEnd)] });
        const streamed = await providerFor(ctx.server).generate('', [], [user('go')]);
        expect(await collect(streamed)).to.deep.equal([textPart('Hel'), textPart('lo')]);
        expect(streamed).to.include({ id: 'msg_cr', finishReason: 'stop' });
        expect(streamed.usage?.output).to.equal(7);
      });
    }

    it('CR only, each write ending with a CR (the line end a parser cannot tell from half a CRLF): the same message', async () => {
      const body = wire(textReply(['Hel', 'lo']).events, '\r');
      ctx.server.reply({ type: 'stream', events: body.split(/(?<=\r)/), eventDelayMs: 1 });
      expect(await collect(await providerFor(ctx.server).generate('', [], [user('go')]))).to.deep.equal([textPart('Hel'), textPart('lo')]);
    });

    it('CR only, and the server keeps the connection open after message_stop: complete at once, not after the timeout', async () => {
      ctx.server.reply({ type: 'stream', events: [wire(textReply(['done']).events, '\r')], then: 'hang' });
      const started = Date.now();
      const streamed = await providerFor(ctx.server, { timeoutMs: 5_000 }).generate('', [], [user('go')]);
      expect(await collect(streamed)).to.deep.equal([textPart('done')]);
      expect(Date.now() - started).to.be.below(2_000);
      expect(await closedWithin(ctx.server.lastRequest.closed), 'the provider closes the request it no longer reads').to.equal('aborted');
    });
  });

  describe('the message ends at message_stop', () => {
    it('a second message after message_stop in the same body is not read: "A", not "AB"', async () => {
      const first = textReply(['A'], { id: 'msg_A' }).events;
      const second = textReply(['B'], { id: 'msg_B', stopReason: 'max_tokens' }).events;
      ctx.server.reply({ type: 'stream', events: [...first, ...second] });
      const streamed = await providerFor(ctx.server).generate('', [], [user('go')]);
      expect(await collect(streamed)).to.deep.equal([textPart('A')]);
      expect(streamed).to.include({ id: 'msg_A', finishReason: 'stop' });
      const result = await generate({ provider: providerFor(ctx.server), systemPrompt: '', history: [user('go')] });
      expect(result.message.content).to.deep.equal([textPart('Hello from the test server.')]);
    });

    it('the connection is used again when the response ends right after message_stop (its end arriving a little later)', async () => {
      const body = wire(textReply(['Hi']).events, '\n');
      let connections = 0;
      const server = createServer((request, response) => {
        request.resume();
        request.once('end', () => {
          response.writeHead(200, { 'content-type': 'text/event-stream' });
          response.write(body);
          setTimeout(() => response.end(), 5);
        });
      });
      server.on('connection', () => connections++);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        const provider = new AnthropicChatProvider({ baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, apiKey: TEST_KEY, model: 'claude-sonnet-4-6' });
        for (let i = 0; i < 10; i++) expect((await generate({ provider, systemPrompt: '', history: [user('go')] })).message.content).to.deep.equal([textPart('Hi')]);
        // Closing each request at its end event took a connection per request (10); reuse depends on timing (the next request may start before the last one's end arrives), so the bound is loose.
        expect(connections, 'connections for 10 requests').to.be.at.most(7);
      } finally {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      }
    });

    it('a stray `data: [DONE]` after message_stop (an OpenAI-style gateway) does not fail the response', async () => {
      ctx.server.reply({ type: 'stream', events: [...textReply(['ok']).events, 'data: [DONE]\n\n'] });
      expect(await collect(await providerFor(ctx.server).generate('', [], [user('go')]))).to.deep.equal([textPart('ok')]);
      ctx.server.reply({ type: 'stream', events: [...textReply(['ok']).events, 'data: [DONE]\n\n', 'data: {oops\n\n'] });
      expect(await collect(await providerFor(ctx.server).generate('', [], [user('go')]))).to.deep.equal([textPart('ok')]);
    });

    it('`data: [DONE]` before message_stop ends the stream there: an APIConnectionError (the response is incomplete), after the parts', async () => {
      ctx.server.reply({ type: 'stream', events: [messageStart(), ...blockEvents(0, { type: 'text', text: ['so far'] }), 'data: [DONE]\n\n', messageDelta('end_turn'), messageStop()] });
      const { parts, error } = await streamFailure(providerFor(ctx.server));
      expect(parts).to.deep.equal([textPart('so far')]);
      expect(APIConnectionError.isInstance(error), String(error)).to.equal(true);
      expect((error as Error).message).to.include('message_stop');
    });
  });

  describe('content blocks already complete in message_start', () => {
    it('are kept, in order, before the streamed blocks: text, thinking with its signature, redacted thinking, a tool call with its input', async () => {
      const start = messageStart({ id: 'msg_full' });
      const message = (start.data as { message: Record<string, unknown> }).message;
      message['content'] = [
        { type: 'thinking', thinking: 'Think first.', signature: 'sig_start' },
        { type: 'redacted_thinking', data: 'EmwKAhgB' },
        { type: 'text', text: 'Adding. ' },
        { type: 'tool_use', id: 'toolu_start', name: 'add', input: { a: 2, b: 3 } },
        { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'x' } },
      ];
      ctx.server.reply({ type: 'stream', events: [start, ...blockEvents(5, { type: 'text', text: ['More.'] }), messageDelta('tool_use'), messageStop()] });
      const streamed = await providerFor(ctx.server).generate('', [], [user('go')]);
      expect(await collect(streamed)).to.deep.equal([
        thinkPart('Think first.', 'sig_start'),
        thinkPart('', `${REDACTED_THINKING_PREFIX}EmwKAhgB`),
        textPart('Adding. '),
        toolCall('toolu_start', 'add', null),
        toolCallPart('{"a":2,"b":3}'),
        textPart('More.'),
      ]);
      expect(streamed).to.include({ id: 'msg_full', finishReason: 'tool_calls' });
    });

    it('a whole message in message_start and no block events: the message, not an empty response', async () => {
      const start = messageStart();
      (start.data as { message: Record<string, unknown> }).message['content'] = [{ type: 'text', text: 'Hello' }];
      ctx.server.reply({ type: 'stream', events: [start, messageDelta('end_turn'), messageStop()] });
      const result = await generate({ provider: providerFor(ctx.server), systemPrompt: '', history: [user('go')] });
      expect(result.message.content).to.deep.equal([textPart('Hello')]);
    });
  });

  describe('a refusal (stop_reason "refusal")', () => {
    it('with no content at all: finish reason content_filter and an empty answer, not an APIEmptyResponseError', async () => {
      ctx.server.reply({ type: 'stream', events: [messageStart({ id: 'msg_refused' }), messageDelta('refusal'), messageStop()] });
      const result = await generate({ provider: providerFor(ctx.server), systemPrompt: '', history: [user('go')] });
      expect(result.finishReason).to.equal('content_filter');
      expect(result.id).to.equal('msg_refused');
      expect(result.message.content).to.deep.equal([]);
    });

    it('with the text that came before it: that text, finish reason content_filter', async () => {
      ctx.server.reply(textReply(['I can help with the first ', 'part, but'], { stopReason: 'refusal' }));
      const result = await generate({ provider: providerFor(ctx.server), systemPrompt: '', history: [user('go')] });
      expect(result).to.deep.include({ finishReason: 'content_filter' });
      expect(result.message.content).to.deep.equal([textPart('I can help with the first part, but')]);
    });

    it('the agent loop does not retry it (one request, no retry event), and the empty answer goes back as no message', async () => {
      ctx.server.reply({ type: 'stream', events: [messageStart(), messageDelta('refusal'), messageStop()] });
      const provider = providerFor(ctx.server);
      const agent = new Agent({ systemPrompt: '', step: (options) => step({ provider, toolset: emptyToolset, ...options }), retry: { initialDelayMs: 1, jitterMs: 0 } });
      const events: AgentEvent[] = [];
      const turn = await agent.run('something it refuses', { onEvent: (event) => void events.push(event) });
      expect(ctx.server.requests).to.have.length(1);
      expect(events.filter((event) => event.type === 'retry')).to.deep.equal([]);
      expect(turn.steps).to.equal(1);
      await agent.run('something else');
      const messages = (ctx.server.lastRequest.body as { messages: { role: string }[] }).messages;
      expect(messages.map((message) => message.role)).to.deep.equal(['user', 'user']);
    });
  });

  describe('feedEveryLineEnd', () => {
    /** The data of the events a parser fed `pieces` this way dispatches. */
    function events(pieces: readonly string[]): string[] {
      const data: string[] = [];
      const feed = feedEveryLineEnd(createParser({ onEvent: (event) => void data.push(event.data) }));
      for (const piece of pieces) feed(piece);
      return data;
    }

    it('a CR ending a piece ends its line at once; an LF beginning the next piece is the rest of a CRLF, not a blank line', () => {
      expect(events(['data: a\r\r'])).to.deep.equal(['a']);
      expect(events(['data: a\r', '\ndata: b\r\n\r\n'])).to.deep.equal(['a\nb']);
      expect(events(['data: a\r', '\n', '\r\n'])).to.deep.equal(['a']);
      expect(events(['data: a\r', '', '\n', 'data: b\r', '\r'])).to.deep.equal(['a\nb']);
      expect(events(['data: a\n', '\n'])).to.deep.equal(['a']);
    });

    it('every split of a body with mixed line ends gives the same events', () => {
      const body = 'data: 1\r\rdata: 2\r\n\r\ndata: 3\n\ndata: 4\r\ndata: 5\r\r: comment\rdata: 6\n\r';
      const whole = events([body]);
      expect(whole).to.deep.equal(['1', '2', '3', '4\n5', '6']);
      for (let cut = 1; cut < body.length; cut++) {
        for (let second = cut + 1; second <= body.length; second++) {
          expect(events([body.slice(0, cut), body.slice(cut, second), body.slice(second)]), `cuts at ${cut}, ${second}`).to.deep.equal(whole);
        }
      }
    });
  });
});
