import type { ServerResponse } from 'node:http';

import { APIConnectionError, generate, textPart } from '@kosong/core';
import { expect } from 'chai';

import { textReply, write } from '../testing/index.js';
import { collect, drain, user, useServer } from './support.js';

/** A reply writing `pieces` of a body as they are, one write each (`then: 'hang'` keeps the connection open after). */
function rawReply(pieces: readonly string[], then: 'end' | 'hang' = 'end') {
  return async (_request: unknown, response: ServerResponse): Promise<void> => {
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const piece of pieces) {
      if (!(await write(response, piece))) return;
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    if (then === 'end') response.end();
  };
}

/** The body of a text reply, each event ended by `lineEnd` twice. */
function body(texts: readonly string[], lineEnd: string): string {
  return textReply(texts, { responseId: 'resp_le' }).events.map((event) => `data: ${JSON.stringify(event)}${lineEnd}${lineEnd}`).join('');
}

describe('GeminiChatProvider: where a stream ends, and its line ends', () => {
  const ctx = useServer();

  for (const [name, lineEnd] of [
    ['CR', '\r'],
    ['CRLF', '\r\n'],
    ['LF', '\n'],
  ] as const) {
    it(`${name} line ends: the whole response, its last event (which ends the body) included`, async () => {
      ctx.server.reply(rawReply([body(['Hel', 'lo'], lineEnd)]));
      const streamed = await ctx.provider().generate('', [], [user('hi')]);
      expect(await collect(streamed)).to.deep.equal([textPart('Hel'), textPart('lo')]);
      expect(streamed).to.include({ id: 'resp_le', finishReason: 'stop' });
    });
  }

  it('CR line ends, each write ending with a CR: the same response', async () => {
    ctx.server.reply(rawReply(body(['Hel', 'lo'], '\r').split(/(?<=\r)/)));
    expect(await collect(await ctx.provider().generate('', [], [user('hi')]))).to.deep.equal([textPart('Hel'), textPart('lo')]);
  });

  it('a stray `data: [DONE]` after the complete response (an OpenAI-style gateway) does not fail it, nor what follows it', async () => {
    ctx.server.reply({ ...textReply(['Hel', 'lo']), trailer: 'data: [DONE]\r\n\r\ndata: {oops\r\n\r\n' });
    const result = await generate({ provider: ctx.provider(), systemPrompt: '', history: [user('hi')] });
    expect(result.message.content).to.deep.equal([textPart('Hello')]);
    expect(result.finishReason).to.equal('stop');
  });

  it('`data: [DONE]` ends the stream even when the server keeps the connection open after it', async () => {
    ctx.server.reply(rawReply([body(['done'], '\n'), 'data: [DONE]\n\n'], 'hang'));
    const started = Date.now();
    expect(await collect(await ctx.provider({ timeoutMs: 5_000 }).generate('', [], [user('hi')]))).to.deep.equal([textPart('done')]);
    expect(Date.now() - started).to.be.below(2_000);
  });

  it('`data: [DONE]` before any finishReason: an incomplete response (APIConnectionError), after the parts', async () => {
    const first = textReply(['so far', 'never']).events[0]!;
    ctx.server.reply(rawReply([`data: ${JSON.stringify(first)}\n\ndata: [DONE]\n\n`]));
    const { parts, error } = await drain(await ctx.provider().generate('', [], [user('hi')]));
    expect(parts).to.deep.equal([textPart('so far')]);
    expect(APIConnectionError.isInstance(error), String(error)).to.equal(true);
    expect((error as Error).message).to.include('finishReason');
  });
});
