import { connect, type Socket } from 'node:net';

import { expect } from 'chai';

import { requireApproval, textPart } from '@kosong/core';
import { EchoChatProvider, MockChatProvider } from '@kosong/provider-echo';

import { memorySessions, type ChatSessions } from '../sessions.js';
import { KEYS, chatBody, localToolset, post, sseData, startServer, waitFor, type TestServer } from './support.js';

function request(server: TestServer, method: string, path: string, key: string): Promise<Response> {
  return fetch(`${server.url}${path}`, { method, headers: { authorization: `Bearer ${key}` } });
}

/** Status, headers that matter and body of a response: what tells one answer from another. */
async function answer(response: Response): Promise<unknown> {
  return { status: response.status, type: response.headers.get('content-type'), body: await response.text() };
}

describe('@kosong/server: security (id guessing, slow clients)', () => {
  let server: TestServer;
  let sessions: ChatSessions;

  afterEach(() => server.close());

  it("tenant A's key on tenant B's running chat: resume, stop and approve get exactly the answers of a chat that does not exist; B's turn goes on", async () => {
    sessions = memorySessions();
    const parts = Array.from({ length: 20 }, (_, i) => textPart(`globex-secret-${i} `));
    server = await startServer({ acme: new EchoChatProvider(), globex: new MockChatProvider(parts, { delayMs: 20 }) }, { sessions });
    const running = await post(server, chatBody('b-chat-7', 'go'), KEYS.globex);
    expect(running.status).to.equal(200);
    const reader = running.body!.getReader();
    await reader.read(); // B's turn is under way

    for (const [method, suffix] of [
      ['GET', 'stream'],
      ['DELETE', 'stream'],
      ['POST', 'stop'],
    ] as const) {
      const guessed = await answer(await request(server, method, `/api/chat/b-chat-7/${suffix}`, KEYS.acme));
      const missing = await answer(await request(server, method, `/api/chat/never-was/${suffix}`, KEYS.acme));
      expect(guessed, `${method} …/${suffix}`).to.deep.equal(missing);
      expect((guessed as { status: number }).status).to.be.oneOf([204, 404]);
    }
    const approve = (id: string): Promise<Response> =>
      fetch(`${server.url}/api/chat`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEYS.acme}` },
        body: JSON.stringify({
          id,
          trigger: 'submit-message',
          messageId: 'a1',
          messages: [{ id: 'a1', role: 'assistant', parts: [{ type: 'dynamic-tool', toolName: 'add', toolCallId: 'x', state: 'approval-responded', input: {}, approval: { id: 'step:0', approved: true } }] }],
        }),
      });
    const guessedApproval = await answer(await approve('b-chat-7'));
    expect(guessedApproval).to.deep.equal(await answer(await approve('never-was-2')));
    expect((guessedApproval as { status: number }).status).to.equal(404);

    // B's turn was neither stopped nor read.
    let rest = '';
    const decoder = new TextDecoder();
    for (let read = await reader.read(); !read.done; read = await reader.read()) rest += decoder.decode(read.value, { stream: true });
    expect(rest).to.include('globex-secret-19');
    expect(sseData(rest).at(-2)).to.deep.include({ type: 'finish' });
    const globex = await sessions.open('globex', 'b-chat-7');
    expect(globex.history.map((m) => m.role)).to.deep.equal(['user', 'assistant']);
  });

  it("tenant A's key on tenant B's stored chat whose call waits: reading it, resuming, stopping and approving it with B's own approval id get exactly the answers of a chat that does not exist; B's call still waits and B approves it", async () => {
    sessions = memorySessions();
    const ran: string[] = [];
    server = await startServer({ acme: new EchoChatProvider(), globex: new EchoChatProvider() }, { sessions, page: true, toolsets: { globex: requireApproval(localToolset(ran)) } });
    const script = ['text: globex-secret', 'tool_call: {"id": "g1", "name": "add", "arguments": "{\\"a\\": 1, \\"b\\": 2}"}', '---', 'text: done'].join('\n');
    const asked = sseData(await (await post(server, chatBody('b-chat-9', script), KEYS.globex)).text()) as { type: string; approvalId?: string; messageId?: string }[];
    const approvalId = asked.find((chunk) => chunk.type === 'tool-approval-request')!.approvalId!;
    const messageId = asked[0]!.messageId!;
    const approve = (id: string, key: string): Promise<Response> =>
      fetch(`${server.url}/api/chat`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}` },
        body: JSON.stringify({
          id,
          trigger: 'submit-message',
          messageId,
          messages: [{ id: messageId, role: 'assistant', parts: [{ type: 'dynamic-tool', toolName: 'add', toolCallId: 'g1', state: 'approval-responded', input: { a: 1, b: 2 }, approval: { id: approvalId, approved: true } }] }],
        }),
      });
    // What tells one answer from another, with the chat id itself written the same way (the read echoes it).
    const seen = async (response: Response, id: string): Promise<unknown> => {
      const { status, type, body } = (await answer(response)) as { status: number; type: string | null; body: string };
      return { status, type, body: body.split(id).join('<id>') };
    };
    const asAcme = async (id: string): Promise<unknown[]> => [
      await seen(await request(server, 'GET', `/api/chat/${id}/messages`, KEYS.acme), id),
      await seen(await request(server, 'GET', `/api/chat/${id}/stream`, KEYS.acme), id),
      await seen(await request(server, 'DELETE', `/api/chat/${id}/stream`, KEYS.acme), id),
      await seen(await request(server, 'POST', `/api/chat/${id}/stop`, KEYS.acme), id),
      await seen(await approve(id, KEYS.acme), id),
    ];
    const guessed = await asAcme('b-chat-9');
    expect(guessed).to.deep.equal(await asAcme('never-was-9'));
    expect(guessed.map((seenAnswer) => (seenAnswer as { status: number }).status)).to.deep.equal([200, 204, 404, 404, 404]);
    expect(JSON.stringify(guessed)).to.not.include('globex-secret');
    expect(ran).to.deep.equal([]); // A's approval ran nothing

    // B's call still waits, with the same id; B's own answer runs it once.
    const own = (await (await request(server, 'GET', '/api/chat/b-chat-9/messages', KEYS.globex)).json()) as { messages: { parts: { type: string; state?: string }[] }[] };
    expect(JSON.stringify(own)).to.include('globex-secret');
    expect(own.messages.at(-1)!.parts.find((part) => part.type === 'dynamic-tool')!.state).to.equal('approval-requested');
    const resumed = await approve('b-chat-9', KEYS.globex);
    expect(resumed.status).to.equal(200);
    expect(await resumed.text()).to.include('done');
    expect(ran).to.deep.equal(['add']);
  });

  it('a client that never reads is detached after maxReaderLagBytes; the server holds no more of it, and the turn goes on, resumable from its start', async function () {
    this.timeout(20_000);
    sessions = memorySessions();
    // 640 parts of 16 KiB: 10.5 MB of text, more than the kernel's socket buffers on loopback take in
    // (tcp_wmem's maximum is 4 MiB here), so the response stops being pulled and falls behind.
    const big = Array.from({ length: 640 }, (_, i) => textPart(`${String(i).padStart(4, '0')}${'x'.repeat(16 * 1024 - 4)}`));
    server = await startServer({ acme: new MockChatProvider(big, { delayMs: 1 }), globex: new EchoChatProvider() }, { sessions, maxReaderLagBytes: 64 * 1024, maxTurnBufferBytes: 32 * 1024 * 1024 });
    const serverSockets: Socket[] = [];
    server.app.server.on('connection', (socket: Socket) => serverSockets.push(socket));

    // A raw client: sends the request, then never reads a byte.
    const body = chatBody('never-reads', 'go');
    const client = connect({ host: '127.0.0.1', port: Number(new URL(server.url).port) });
    client.pause();
    await new Promise<void>((resolve) => client.once('connect', resolve));
    client.write(`POST /api/chat HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${KEYS.acme}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    await waitFor(() => serverSockets.length === 1, 'the connection');
    const peer = serverSockets[0]!;

    // A resume from another client reads the whole turn from its start, while the first does not read.
    const resumed = await request(server, 'GET', '/api/chat/never-reads/stream', KEYS.acme);
    expect(resumed.status).to.equal(200);
    const chunks = sseData(await resumed.text()) as { type: string; delta?: string }[];
    const text = chunks.filter((c) => c.type === 'text-delta').map((c) => c.delta).join('');
    expect(text).to.equal(big.map((p) => p.text).join(''));
    expect(chunks.at(-2)).to.deep.include({ type: 'finish' });

    // The reader that did not read was detached: the server closed its connection (a response still being
    // written, with megabytes it could not send, would hold it open).
    await waitFor(() => peer.destroyed, 'the slow connection to be closed');
    const context = await sessions.open('acme', 'never-reads');
    expect(context.history.map((m) => m.role)).to.deep.equal(['user', 'assistant']);
    client.destroy();
  });
});
