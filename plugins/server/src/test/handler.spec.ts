import { expect } from 'chai';

import { Kernel, textPart } from '@kosong/core';
import { EchoChatProvider, MockChatProvider } from '@kosong/provider-echo';

import { apiKeyAuth, hashApiKey } from '../auth.js';
import { createChatHandler, type ChatHandler } from '../chat-handler.js';
import { TurnReaderDetachedError, TurnStream } from '../turn-stream.js';
import { chatBody, localToolset, sseData } from './support.js';

describe('@kosong/server: the framework-neutral handler (Request → Response, no Fastify)', () => {
  let kernel: Kernel;
  let handler: ChatHandler;

  beforeEach(() => {
    kernel = new Kernel();
    kernel.tenants.define('acme', { provider: new EchoChatProvider(), toolset: localToolset() });
    handler = createChatHandler({ kernel, auth: apiKeyAuth([{ sha256: hashApiKey('k'), tenant: 'acme' }]), path: '/v1/chat/', agent: { systemPrompt: 'Be brief.', maxSteps: 3 } });
  });
  afterEach(async () => {
    await handler.close();
    await kernel.dispose();
  });

  it('answers a Web Request with a streaming Response on its own path', async () => {
    const request = new Request('http://localhost/v1/chat', { method: 'POST', headers: { authorization: 'Bearer k' }, body: chatBody('h1', 'text: neutral') });
    const response = await handler(request);
    expect(response.status).to.equal(200);
    const chunks = sseData(await response.text()) as { type: string; delta?: string }[];
    expect(chunks.map((c) => (typeof c === 'string' ? c : c.type))).to.deep.equal(['start', 'start-step', 'text-start', 'text-delta', 'text-end', 'finish-step', 'finish', '[DONE]']);
    expect(chunks.find((c) => c.type === 'text-delta')!.delta).to.equal('neutral');
    expect((await handler(new Request('http://localhost/api/chat', { method: 'POST', headers: { authorization: 'Bearer k' }, body: '{}' }))).status).to.equal(404);
  });

  it('maxSteps of the agent options holds: a model that keeps calling tools stops at it, finish says tool-calls', async () => {
    kernel.tenants.define('loop', { provider: new MockChatProvider([{ type: 'function', id: 'a', function: { name: 'add', arguments: '{"a":1,"b":1}' } }]), toolset: localToolset() });
    const looping = createChatHandler({ kernel, auth: () => 'loop', agent: { systemPrompt: '', maxSteps: 2 } });
    try {
      const response = await looping(new Request('http://localhost/api/chat', { method: 'POST', body: chatBody('l1', 'go') }));
      const chunks = sseData(await response.text()) as { type: string; finishReason?: string; messageMetadata?: { stopReason: string; steps: number } }[];
      const finish = chunks.find((c) => c.type === 'finish')!;
      expect(finish.finishReason).to.equal('tool-calls');
      expect(finish.messageMetadata).to.deep.include({ stopReason: 'max_steps', steps: 2 });
      expect(chunks.filter((c) => c.type === 'tool-output-available')).to.have.length(2);
    } finally {
      await looping.close();
    }
  });

  it('refuses an option it does not know, no auth, or a size that is no positive integer (fail closed)', () => {
    const auth = apiKeyAuth([{ sha256: hashApiKey('k'), tenant: 'acme' }]);
    expect(() => createChatHandler({ kernel, auth, maxBodyByte: 10 } as never)).to.throw(TypeError, /unknown option "maxBodyByte"/);
    expect(() => createChatHandler({ kernel } as never)).to.throw(TypeError, /auth must be a function/);
    for (const bad of [0, -1, 1.5, Number.NaN, '10']) {
      expect(() => createChatHandler({ kernel, auth, maxBodyBytes: bad as number })).to.throw(TypeError, /maxBodyBytes must be a positive integer/);
      expect(() => createChatHandler({ kernel, auth, maxTurnBufferBytes: bad as number })).to.throw(TypeError, /maxTurnBufferBytes must be a positive integer/);
    }
  });

  it('many turns at once add no listener per turn to a shared signal (no MaxListenersExceededWarning)', async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error): void => void warnings.push(warning);
    process.on('warning', onWarning);
    try {
      kernel.tenants.define('many', { provider: new MockChatProvider([textPart('a'), textPart('b')], { delayMs: 20 }) });
      const many = createChatHandler({ kernel, auth: () => 'many' });
      const responses = await Promise.all(Array.from({ length: 30 }, (_, i) => many(new Request('http://localhost/api/chat', { method: 'POST', body: chatBody(`m${i}`, 'go') }))));
      await Promise.all(responses.map((response) => response.text()));
      await many.close();
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).to.deep.equal([]);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('once closed, requests get a 503', async () => {
    await handler.close();
    const response = await handler(new Request('http://localhost/v1/chat', { method: 'POST', headers: { authorization: 'Bearer k' }, body: chatBody('h2', 'text: hi') }));
    expect(response.status).to.equal(503);
  });
});

describe('@kosong/server: TurnStream, the bounded buffer of a turn', () => {
  const text = async (stream: ReadableStream<Uint8Array>): Promise<string> => new Response(stream).text();

  it('every reader gets every frame from the first, whenever it starts', async () => {
    const turn = new TurnStream(1000);
    turn.write('a');
    const early = turn.reader();
    turn.write('b');
    const late = turn.reader();
    turn.write('c');
    turn.end();
    expect(await Promise.all([text(early), text(late)])).to.deep.equal(['abc', 'abc']);
  });

  it('past its bound it is no longer replayable; a reader more than maxLagBytes behind is detached (its stream errors) while the others go on', async () => {
    const turn = new TurnStream(10, 8);
    const slow = turn.reader().getReader();
    const fast = turn.reader();
    const fastReader = fast.getReader();
    const decoder = new TextDecoder();
    let fastText = '';
    for (let i = 0; i < 6; i++) {
      turn.write(`${i}${i}${i}`);
      fastText += decoder.decode((await fastReader.read()).value);
    }
    turn.end();
    expect(turn.replayable).to.equal(false);
    expect((await fastReader.read()).done).to.equal(true);
    expect(fastText).to.equal('000111222333444555');
    expect(turn.readers).to.equal(0);
    let error: unknown;
    try {
      for (;;) if ((await slow.read()).done) break;
    } catch (caught) {
      error = caught;
    }
    expect(error).to.be.instanceOf(TurnReaderDetachedError); // never a clean end that would look like the whole turn
  });

  it('a cancelled reader holds nothing back', async () => {
    const turn = new TurnStream(5);
    const reader = turn.reader();
    await reader.cancel();
    for (let i = 0; i < 10; i++) turn.write('xx');
    turn.end();
    const fresh = turn.reader();
    expect((await text(fresh)).length).to.be.at.most(5);
  });
});
