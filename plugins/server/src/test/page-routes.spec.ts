import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { createMessage, Kernel, requireApproval, thinkPart, textPart, toolCall } from '@kosong/core';
import { EchoChatProvider } from '@kosong/provider-echo';
import type { FastifyInstance } from 'fastify';

import { apiKeyAuth, hashApiKey } from '../auth.js';
import { savedChatMessages } from '../page-messages.js';
import { createSavedChatHandler } from '../page-routes.js';
import { createPageHandler, registerPage } from '../page.js';
import { createServer } from '../server.js';
import { memorySessions } from '../sessions.js';
import { KEYS, chatBody, localToolset, sseData } from './support.js';

/** The key of a tenant whose `add` calls need approval. */
const APPROVER_KEY = 'sk-initech-approvals-0123';

const auth = apiKeyAuth([
  { sha256: hashApiKey(KEYS.acme), tenant: 'acme' },
  { sha256: hashApiKey(KEYS.globex), tenant: 'globex' },
  { sha256: hashApiKey(APPROVER_KEY), tenant: 'initech' },
]);

describe('@kosong/server: the page (createPageHandler, registerPage) and saved chats (GET <path>/<id>/messages)', () => {
  describe('the Web handler', () => {
    const page = createPageHandler({ path: '/v1/chat' });
    const get = (path: string, init: RequestInit = {}): Promise<Response | undefined> => page(new Request(`http://localhost${path}`, init));

    it("serves the page at / with the chat route in its meta tag, and a policy that lets it reach its own origin only", async () => {
      const response = (await get('/'))!;
      expect(response.status).to.equal(200);
      expect(response.headers.get('content-type')).to.equal('text/html; charset=utf-8');
      const csp = response.headers.get('content-security-policy')!;
      expect(csp).to.include("connect-src 'self'").and.include("script-src 'self'").and.include("default-src 'none'");
      expect(response.headers.get('x-content-type-options')).to.equal('nosniff');
      const html = await response.text();
      expect(html).to.include('<meta name="kosong-api" content="/v1/chat" />');
      expect(html).to.include('<script type="module" src="/page/app.js"></script>');
    });

    it('serves its script and style with an ETag: the same ETag is a 304 without a body; HEAD has no body', async () => {
      const script = (await get('/page/app.js'))!;
      expect(script.status).to.equal(200);
      expect(script.headers.get('content-type')).to.equal('text/javascript; charset=utf-8');
      const etag = script.headers.get('etag')!;
      expect(etag).to.match(/^"[\w-]{27}"$/);
      expect((await script.arrayBuffer()).byteLength).to.equal(Number(script.headers.get('content-length')));
      const again = (await get('/page/app.js', { headers: { 'if-none-match': etag } }))!;
      expect(again.status).to.equal(304);
      expect(again.body).to.equal(null);
      const style = (await get('/page/app.css', { method: 'HEAD' }))!;
      expect(style.status).to.equal(200);
      expect(style.headers.get('content-type')).to.equal('text/css; charset=utf-8');
      expect(style.body).to.equal(null);
      expect(style.headers.get('etag')).to.not.equal(etag);
    });

    it("answers 405 to another method, and leaves every other path (the chat's) to the next handler", async () => {
      const post = (await get('/', { method: 'POST', body: '{}' }))!;
      expect(post.status).to.equal(405);
      expect(post.headers.get('allow')).to.equal('GET, HEAD');
      expect(await get('/v1/chat')).to.equal(undefined);
      expect(await get('/v1/chat/abc/messages')).to.equal(undefined); // no savedChats: not served
      expect(await get('/index.html')).to.equal(undefined);
      expect(await get('/page/../package.json')).to.equal(undefined);
    });

    it('saved chats: a session that cannot be read is a 500 that says no more (onError is told why); another method a 405', async () => {
      const failures: unknown[] = [];
      const failing = { open: () => Promise.reject(new Error('disk on fire')), close: () => Promise.resolve() };
      const saved = createSavedChatHandler({ auth, sessions: failing, onError: (error) => failures.push(error) });
      const request = (method: string) => new Request('http://localhost/api/chat/any/messages', { method, headers: { authorization: `Bearer ${KEYS.acme}` } });
      const response = (await saved(request('GET')))!;
      expect(response.status).to.equal(500);
      expect(await response.json()).to.deep.equal({ error: { code: 'internal', message: 'The request failed on the server' } });
      expect(failures.map((error) => (error as Error).message)).to.deep.equal(['disk on fire']);
      const post = (await saved(request('POST')))!;
      expect(post.status).to.equal(405);
      expect(post.headers.get('allow')).to.equal('GET');
      expect(await saved(new Request('http://localhost/api/chat/any/stream'))).to.equal(undefined);
    });

    it('refuses an option it does not know, a path that is not of this origin, and a page that is not built', () => {
      expect(() => createPageHandler({ pth: '/x' } as never)).to.throw(TypeError, 'createPageHandler: unknown option "pth"');
      expect(() => createPageHandler({ path: '//evil.example/chat' })).to.throw(TypeError, 'path must be a path of this origin');
      expect(() => createPageHandler({ path: 'https://evil.example/chat' })).to.throw(TypeError, 'path must be a path of this origin');
      expect(() => createPageHandler({ path: '/' })).to.throw(TypeError, 'path must be a path of this origin');
      expect(() => createPageHandler({ savedChats: { auth, sessions: memorySessions(), extra: 1 } as never })).to.throw(TypeError, 'unknown option "extra"');
      expect(() => createSavedChatHandler({ auth, sessions: undefined as never })).to.throw(TypeError, 'sessions must be');
      const empty = mkdtempSync(join(tmpdir(), 'kosong-page-none-'));
      try {
        expect(() => createPageHandler({ assetsDir: empty })).to.throw(Error, 'The web page is not built: index.html is missing');
      } finally {
        rmSync(empty, { recursive: true, force: true });
      }
    });
  });

  describe('on Fastify, beside the chat handler', () => {
    let app: FastifyInstance;
    let kernel: Kernel;
    let url: string;

    before(async () => {
      kernel = new Kernel();
      kernel.tenants.define('acme', { provider: new EchoChatProvider(), toolset: localToolset() });
      kernel.tenants.define('globex', { provider: new EchoChatProvider(), toolset: localToolset() });
      kernel.tenants.define('initech', { provider: new EchoChatProvider(), toolset: requireApproval(localToolset(), ['add']) });
      const sessions = memorySessions();
      app = createServer({ kernel, auth, sessions });
      registerPage(app, { savedChats: { auth, sessions } });
      await app.listen({ port: 0, host: '127.0.0.1' });
      url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
    });
    after(async () => {
      await app.close();
      await kernel.dispose();
    });

    const read = (chatId: string, key: string | null = KEYS.acme): Promise<Response> =>
      fetch(`${url}/api/chat/${encodeURIComponent(chatId)}/messages`, { headers: key === null ? {} : { authorization: `Bearer ${key}` } });

    it('the page and the chat route live on one instance: / is the page, POST /api/chat still the chat', async () => {
      const home = await fetch(`${url}/`);
      expect(home.status).to.equal(200);
      expect(await home.text()).to.include('<div id="root"></div>');
      const chat = await fetch(`${url}/api/chat`, { method: 'POST', headers: { authorization: `Bearer ${KEYS.acme}`, 'content-type': 'application/json' }, body: chatBody('live', 'text: hi') });
      expect(chat.status).to.equal(200);
      expect(await chat.text()).to.include('"delta":"hi"');
      expect((await fetch(`${url}/nowhere`)).status).to.equal(404); // the chat handler's 404, as before
    });

    it("reads a saved chat as useChat's messages: steps, text, reasoning, tool calls with their outputs", async () => {
      const script = 'think: Adding.\ntool_call: {"id": "c1", "name": "add", "arguments": "{\\"a\\": 1, \\"b\\": 2}"}\n---\ntext: 3';
      const turn = await fetch(`${url}/api/chat`, { method: 'POST', headers: { authorization: `Bearer ${KEYS.acme}`, 'content-type': 'application/json' }, body: chatBody('saved-1', script) });
      await turn.text();
      const response = await read('saved-1');
      expect(response.status).to.equal(200);
      expect(response.headers.get('cache-control')).to.equal('no-store');
      expect(await response.json()).to.deep.equal({
        id: 'saved-1',
        messages: [
          { id: 'saved-1-0', role: 'user', parts: [{ type: 'text', text: script, state: 'done' }] },
          {
            id: 'saved-1-1',
            role: 'assistant',
            parts: [
              { type: 'step-start' },
              { type: 'reasoning', text: 'Adding.', state: 'done' },
              { type: 'dynamic-tool', toolName: 'add', toolCallId: 'c1', state: 'output-available', input: { a: 1, b: 2 }, output: '3' },
              { type: 'step-start' },
              { type: 'text', text: '3', state: 'done' },
            ],
          },
        ],
      });
    });

    it('a step that waits for approval ends the saved chat: its waiting call with the approval id the stream gave, its settled call with its result', async () => {
      const script = 'tool_call: {"id": "c1", "name": "wait", "arguments": "{\\"ms\\": 0}"}\ntool_call: {"id": "c2", "name": "add", "arguments": "{\\"a\\": 1, \\"b\\": 2}"}\n---\ntext: 3';
      const turn = await fetch(`${url}/api/chat`, { method: 'POST', headers: { authorization: `Bearer ${APPROVER_KEY}`, 'content-type': 'application/json' }, body: chatBody('waits-1', script) });
      const chunks = sseData(await turn.text()) as { type: string; approvalId?: string; toolCallId?: string }[];
      const request = chunks.find((chunk) => chunk.type === 'tool-approval-request')!;
      expect(request.toolCallId).to.equal('c2');
      const body = (await (await read('waits-1', APPROVER_KEY)).json()) as { messages: { role: string; parts: unknown[] }[] };
      expect(body.messages.map((message) => message.role)).to.deep.equal(['user', 'assistant']);
      expect(body.messages[1]!.parts).to.deep.equal([
        { type: 'step-start' },
        { type: 'dynamic-tool', toolName: 'wait', toolCallId: 'c1', input: { ms: 0 }, state: 'output-available', output: 'waited' },
        { type: 'dynamic-tool', toolName: 'add', toolCallId: 'c2', input: { a: 1, b: 2 }, state: 'approval-requested', approval: { id: request.approvalId } },
      ]);
    });

    it("only for its tenant: another key, the same id, is an empty chat of its own; no key is a 401; a bad id a 400", async () => {
      const other = await read('saved-1', KEYS.globex);
      expect(other.status).to.equal(200);
      expect(await other.json()).to.deep.equal({ id: 'saved-1', messages: [] });
      const none = await read('saved-1', null);
      expect(none.status).to.equal(401);
      expect(none.headers.get('www-authenticate')).to.equal('Bearer');
      expect(((await none.json()) as { error: { code: string } }).error.code).to.equal('unauthorized');
      const wrong = await read('saved-1', 'sk-wrong');
      expect(wrong.status).to.equal(401);
      const bad = await read('.hidden');
      expect(bad.status).to.equal(400);
      expect(((await bad.json()) as { error: { code: string } }).error.code).to.equal('bad_chat_id');
    });
  });

  describe('savedChatMessages', () => {
    it('leaves out system messages, media and results of calls it has not seen; a turn of several steps is one message', () => {
      const history = [
        createMessage('system', 'be brief'),
        createMessage('user', [textPart('look'), { type: 'image_url', imageUrl: { url: 'https://example.com/a.png' } }]),
        createMessage('tool', 'orphan', { toolCallId: 'nobody' }),
        createMessage('assistant', [thinkPart(''), textPart('Looking.')], { toolCalls: [toolCall('t1', 'ls', null), toolCall('t2', 'cat', 'not json')] }),
        createMessage('tool', 'a.txt', { toolCallId: 't1' }),
        createMessage('assistant', 'Done.'),
      ];
      expect(savedChatMessages('c', history)).to.deep.equal([
        { id: 'c-1', role: 'user', parts: [{ type: 'text', text: 'look', state: 'done' }] },
        {
          id: 'c-3',
          role: 'assistant',
          parts: [
            { type: 'step-start' },
            { type: 'text', text: 'Looking.', state: 'done' },
            { type: 'dynamic-tool', toolName: 'ls', toolCallId: 't1', state: 'output-available', input: {}, output: 'a.txt' },
            { type: 'dynamic-tool', toolName: 'cat', toolCallId: 't2', state: 'input-available', input: 'not json' },
            { type: 'step-start' },
            { type: 'text', text: 'Done.', state: 'done' },
          ],
        },
      ]);
    });
  });
});
