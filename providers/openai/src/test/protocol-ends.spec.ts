import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import { generate, textPart } from '@kosong/core';
import { writeChunk } from '@kosong/core/testing';
import { expect } from 'chai';

import { OpenAIChatProvider, type ChatCompletionsStream } from '../index.js';
import { encodeResponsesStream, encodeStream, responsesReply, textReply } from '../testing/index.js';
import { collect, delay, TEST_KEY, user, useServer } from './support.js';
import { useResponsesServer } from './responses-support.js';

/** A reply writing `pieces` of a body as they are, one write each; `hang` keeps the connection open after. */
function rawReply(pieces: readonly string[], then: 'end' | 'hang' = 'end') {
  return async (_request: unknown, response: ServerResponse): Promise<void> => {
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const piece of pieces) {
      if (!(await writeChunk(response, piece))) return;
      await delay(1);
    }
    if (then === 'end') response.end();
  };
}

/** How the exchange ended for the server, or `open` if it has not within `ms`. */
function closedWithin(closed: Promise<'completed' | 'aborted'>, ms = 2_000): Promise<string> {
  return Promise.race([closed, delay(ms).then(() => 'open')]);
}

const LINE_ENDS = [
  ['CR', '\r'],
  ['CRLF', '\r\n'],
  ['LF', '\n'],
] as const;

describe('Where a stream ends, and its line ends (OpenAI family)', () => {
  describe('Chat Completions', () => {
    const ctx = useServer();
    const provider = (): OpenAIChatProvider => new OpenAIChatProvider({ baseURL: ctx.server.baseURL, apiKey: TEST_KEY, model: 'gpt-test', timeoutMs: 5_000 });

    for (const [name, lineEnd] of LINE_ENDS) {
      it(`${name} line ends: every chunk, the usage chunk that ends the body (no [DONE]) included`, async () => {
        const body = encodeStream({ ...textReply(['Hel', 'lo']), done: false }).replaceAll('\n', lineEnd);
        ctx.server.reply(rawReply([body]));
        const streamed = (await provider().generate('', [], [user('hi')])) as ChatCompletionsStream;
        expect(await collect(streamed)).to.deep.equal([textPart('Hel'), textPart('lo')]);
        expect(streamed.finishReason).to.equal('stop');
        expect(streamed.usage).to.deep.include({ inputOther: 10, output: 2 });
      });
    }

    it('CR line ends, each write ending with a CR: the same', async () => {
      const body = encodeStream({ ...textReply(['Hel', 'lo']), done: false }).replaceAll('\n', '\r');
      ctx.server.reply(rawReply(body.split(/(?<=\r)/)));
      const streamed = (await provider().generate('', [], [user('hi')])) as ChatCompletionsStream;
      expect(await collect(streamed)).to.deep.equal([textPart('Hel'), textPart('lo')]);
      expect(streamed.usage).to.deep.include({ output: 2 });
    });

    it('`data: [DONE]` ends the stream even when the server keeps the connection open after it (CR line ends too)', async () => {
      for (const lineEnd of ['\n', '\r']) {
        ctx.server.reply(rawReply([encodeStream(textReply(['done'])).replaceAll('\n', lineEnd)], 'hang'));
        const started = Date.now();
        expect(await collect(await provider().generate('', [], [user('hi')]))).to.deep.equal([textPart('done')]);
        expect(Date.now() - started).to.be.below(2_000);
        expect(await closedWithin(ctx.server.lastRequest.closed), 'the provider closes the request it no longer reads').to.equal('aborted');
      }
    });
  });

  it('Chat Completions: the connection is used again when the response ends right after [DONE] (its end arriving a little later)', async () => {
    const body = encodeStream(textReply(['Hi']));
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
      const provider = new OpenAIChatProvider({ baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, apiKey: TEST_KEY, model: 'gpt-test' });
      for (let i = 0; i < 10; i++) expect((await generate({ provider, systemPrompt: '', history: [user('hi')] })).message.content).to.deep.equal([textPart('Hi')]);
      // Closing each request at its end event took a connection per request (10); reuse depends on timing (the next request may start before the last one's end arrives), so the bound is loose.
      expect(connections, 'connections for 10 requests').to.be.at.most(7);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  describe('Responses', () => {
    const ctx = useResponsesServer();

    for (const [name, lineEnd] of LINE_ENDS) {
      it(`${name} line ends: the whole response, its last event (response.completed, which ends the body) included`, async () => {
        ctx.server.reply(rawReply([encodeResponsesStream(responsesReply([{ type: 'message', text: ['Hel', 'lo'] }], { id: 'resp_le' })).replaceAll('\n', lineEnd)]));
        const result = await generate({ provider: ctx.provider(), systemPrompt: '', history: [user('hi')] });
        expect(result.message.content).to.deep.equal([textPart('Hello')]);
        expect(result).to.include({ id: 'resp_le', finishReason: 'stop' });
      });
    }

    it('CR line ends, and the server keeps the connection open after response.completed: complete at once, not after the timeout', async () => {
      const body = encodeResponsesStream(responsesReply([{ type: 'message', text: ['done'] }])).replaceAll('\n', '\r');
      ctx.server.reply(rawReply(body.split(/(?<=\r)/), 'hang'));
      const started = Date.now();
      expect(await collect(await ctx.provider({ timeoutMs: 5_000 }).generate('', [], [user('hi')]))).to.deep.equal([textPart('done')]);
      expect(Date.now() - started).to.be.below(2_000);
      expect(await closedWithin(ctx.server.lastRequest.closed)).to.equal('aborted');
    });
  });
});
