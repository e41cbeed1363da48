import { expect } from 'chai';

import { textPart } from '@kosong/core';
import { EchoChatProvider, MockChatProvider } from '@kosong/provider-echo';

import { apiKeyAuth, hashApiKey, presentedApiKey } from '../auth.js';
import { memorySessions, type ChatSessions } from '../sessions.js';
import { createServer } from '../server.js';
import { KEYS, chatBody, post, sseData, startServer, transport, type TestServer } from './support.js';

describe('@kosong/server: authentication and tenant isolation', () => {
  let server: TestServer;
  let sessions: ChatSessions;
  let slow: MockChatProvider;
  let globexProvider: EchoChatProvider;

  beforeEach(async () => {
    sessions = memorySessions();
    slow = new MockChatProvider(Array.from({ length: 20 }, (_, i) => textPart(`acme-secret-${i} `)), { delayMs: 20 });
    globexProvider = new EchoChatProvider();
    server = await startServer({ acme: slow, globex: globexProvider }, { sessions });
  });
  afterEach(() => server.close());

  it('a request without a key is a 401 with a JSON error and WWW-Authenticate, and runs nothing', async () => {
    const response = await post(server, chatBody('c1', 'hello'), null);
    expect(response.status).to.equal(401);
    expect(response.headers.get('www-authenticate')).to.equal('Bearer');
    expect(response.headers.get('content-type')).to.match(/^application\/json/);
    expect(await response.json()).to.deep.equal({ error: { code: 'unauthorized', message: 'A valid API key is required (Authorization: Bearer <key>)' } });
    expect(slow.generateCalls).to.equal(0);
  });

  it('a wrong key (one character off, or another scheme) is a 401; the AI SDK client reports the JSON error', async () => {
    for (const authorization of [`Bearer ${KEYS.acme.slice(0, -1)}x`, `Basic ${KEYS.acme}`, 'Bearer', `Bearer ${KEYS.acme} extra`]) {
      const response = await fetch(`${server.url}/api/chat`, { method: 'POST', headers: { authorization }, body: chatBody('c1', 'hello') });
      expect(response.status, authorization).to.equal(401);
    }
    let error: unknown;
    try {
      await transport(server, 'sk-not-a-key').sendMessages({ chatId: 'c1', trigger: 'submit-message', messageId: undefined, abortSignal: undefined, messages: [{ id: 'u', role: 'user', parts: [{ type: 'text', text: 'hi' }] }] });
    } catch (caught) {
      error = caught;
    }
    expect((error as Error).message).to.include('"code":"unauthorized"');
    const resume = await fetch(`${server.url}/api/chat/c1/stream`, { headers: { authorization: 'Bearer sk-wrong' } });
    expect(resume.status).to.equal(401);
    expect(slow.generateCalls).to.equal(0);
  });

  it('x-api-key is taken too; the body cannot choose the tenant', async () => {
    const body = JSON.stringify({ ...JSON.parse(chatBody('c-body', 'text: from globex?')), tenant: 'globex', headers: { authorization: `Bearer ${KEYS.globex}` } });
    const response = await fetch(`${server.url}/api/chat`, { method: 'POST', headers: { 'x-api-key': KEYS.acme }, body });
    expect(response.status).to.equal(200);
    await response.text();
    expect(slow.generateCalls).to.equal(1); // acme's provider answered
    expect(globexProvider.requests).to.have.length(0);
  });

  it("tenant B cannot resume or read tenant A's chat by guessing its id: it gets 204, and a chat of its own under that id", async () => {
    const running = await post(server, chatBody('guessable-id', 'go'), KEYS.acme);
    expect(running.status).to.equal(200);
    const reader = running.body!.getReader();
    await reader.read(); // A's turn is under way

    const guess = await fetch(`${server.url}/api/chat/guessable-id/stream`, { headers: { authorization: `Bearer ${KEYS.globex}` } });
    expect(guess.status).to.equal(204);
    const own = await fetch(`${server.url}/api/chat/guessable-id/stream`, { headers: { authorization: `Bearer ${KEYS.acme}` } });
    expect(own.status).to.equal(200);

    // B posting to the same id talks to a chat of its own: none of A's history reaches B's model, nor B's answer A's chat.
    const b = await post(server, chatBody('guessable-id', 'text: globex here'), KEYS.globex);
    expect(b.status).to.equal(200);
    const bText = await b.text();
    expect(bText).to.not.include('acme-secret');
    expect(globexProvider.requests.at(-1)!.historyLength).to.equal(1);

    const aText = await own.text();
    expect(aText).to.include('acme-secret-19');
    expect(aText).to.not.include('globex here');
    reader.releaseLock();
    await running.body!.cancel();
    const acme = await sessions.open('acme', 'guessable-id');
    const globex = await sessions.open('globex', 'guessable-id');
    expect(acme.history.map((m) => m.role)).to.deep.equal(['user', 'assistant']);
    expect(JSON.stringify(acme.history)).to.not.include('globex here');
    expect(JSON.stringify(globex.history)).to.not.include('acme-secret');
  });

  it('a user-supplied authenticate decides the tenant; one that throws is a 500, never a pass', async () => {
    const errors: unknown[] = [];
    const app = createServer({
      kernel: server.kernel,
      onError: (error) => errors.push(error),
      auth: (request) => {
        const user = request.headers.get('x-user');
        if (user === 'boom') throw new Error('directory down');
        return user === 'ann' ? 'globex' : undefined;
      },
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const { port } = app.server.address() as { port: number };
      const url = `http://127.0.0.1:${port}/api/chat`;
      const ok = await fetch(url, { method: 'POST', headers: { 'x-user': 'ann' }, body: chatBody('c', 'text: hi ann') });
      expect(ok.status).to.equal(200);
      const deltas = (sseData(await ok.text()) as { type: string; delta?: string }[]).filter((c) => c.type === 'text-delta');
      expect(deltas.map((c) => c.delta)).to.deep.equal(['hi ann']);
      expect(globexProvider.requests).to.have.length(1);
      const nobody = await fetch(url, { method: 'POST', headers: { 'x-user': 'bob' }, body: chatBody('c', 'text: hi') });
      expect(nobody.status).to.equal(401);
      const broken = await fetch(url, { method: 'POST', headers: { 'x-user': 'boom' }, body: chatBody('c', 'text: hi') });
      expect(broken.status).to.equal(500);
      expect(((await broken.json()) as { error: { code: string } }).error.code).to.equal('internal');
      expect(errors.map(String)).to.deep.equal(['Error: directory down']);
      expect(globexProvider.requests).to.have.length(1);
    } finally {
      await app.close();
    }
  });

  it('apiKeyAuth keeps hashes only and refuses entries that are not SHA-256 hex', () => {
    expect(hashApiKey('abc')).to.equal('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(() => apiKeyAuth([{ sha256: 'sk-plain-key', tenant: 'acme' }])).to.throw(TypeError, /SHA-256/);
    expect(() => apiKeyAuth([{ sha256: hashApiKey('k'), tenant: '' }])).to.throw(TypeError, /tenant/);
    const auth = apiKeyAuth([{ sha256: hashApiKey('k1').toUpperCase(), tenant: 'a' }, { sha256: hashApiKey('k2'), tenant: 'b' }]);
    const request = (headers: Record<string, string>): Request => new Request('http://x/api/chat', { headers });
    expect(auth(request({ authorization: 'Bearer k1' }))).to.equal('a');
    expect(auth(request({ authorization: 'bearer k2' }))).to.equal('b');
    expect(auth(request({ authorization: 'Bearer k3' }))).to.equal(undefined);
    expect(auth(request({}))).to.equal(undefined);
    expect(presentedApiKey(request({ 'x-api-key': ' k2 ' }))).to.equal('k2');
  });
});
