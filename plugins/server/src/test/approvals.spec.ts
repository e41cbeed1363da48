import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { expect } from 'chai';
import { lastAssistantMessageIsCompleteWithApprovalResponses, readUIMessageStream, type DynamicToolUIPart, type UIMessage } from 'ai';

import { Kernel, requireApproval } from '@kosong/core';
import { EchoChatProvider } from '@kosong/provider-echo';

import { apiKeyAuth, hashApiKey } from '../auth.js';
import { directorySessions, memorySessions, type ChatSessions } from '../sessions.js';
import { createServer } from '../server.js';
import { KEYS, NodeChat, expectKnownChunks, markerLines, markerToolset, sseData, transport, waitFor, type TestServer } from './support.js';

/** One call of `mark` that needs approval, then an answer. */
const SCRIPT = ['tool_call: {"id": "m1", "name": "mark", "arguments": "{\\"note\\": \\"x\\"}"}', '---', 'text: all done'].join('\n');

/** The dynamic tool part of a call in the chat's last message. */
function toolPart(chat: NodeChat, toolCallId: string): DynamicToolUIPart {
  const part = chat.lastMessage!.parts.find((p) => p.type === 'dynamic-tool' && p.toolCallId === toolCallId);
  expect(part, `a tool part of ${toolCallId}`).to.not.equal(undefined);
  return part as DynamicToolUIPart;
}

describe('@kosong/server: approvals over HTTP (tool-approval-request, addToolApprovalResponse)', () => {
  let folder: string;
  let marker: string;
  let sessions: ChatSessions;
  let server: TestServer;

  async function start(chatSessions: ChatSessions, toolDelayMs = 0): Promise<TestServer> {
    const kernel = new Kernel();
    kernel.tenants.define('acme', { provider: new EchoChatProvider(), toolset: requireApproval(markerToolset(marker, toolDelayMs)) });
    kernel.tenants.define('globex', { provider: new EchoChatProvider(), toolset: requireApproval(markerToolset(marker)) });
    const auth = apiKeyAuth([
      { sha256: hashApiKey(KEYS.acme), tenant: 'acme' },
      { sha256: hashApiKey(KEYS.globex), tenant: 'globex' },
    ]);
    const app = createServer({ kernel, auth, sessions: chatSessions });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as { port: number };
    return {
      app,
      kernel,
      url: `http://127.0.0.1:${port}`,
      async close() {
        await app.close();
        await kernel.dispose();
      },
    };
  }

  beforeEach(async () => {
    folder = await mkdtemp(join(tmpdir(), 'kosong-server-approvals-'));
    marker = join(folder, 'marker.txt');
    sessions = memorySessions();
    server = await start(sessions);
  });
  afterEach(async () => {
    await server.close();
    await rm(folder, { recursive: true, force: true });
  });

  /** Sends the script with the AI SDK's Chat; returns the chat, its call waiting for approval. */
  async function askForApproval(chatId: string): Promise<{ chat: NodeChat; errors: Error[] }> {
    const errors: Error[] = [];
    const chat = new NodeChat({ id: chatId, transport: transport(server, KEYS.acme), onError: (e) => errors.push(e), sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses });
    await chat.sendMessage({ text: SCRIPT });
    expect(errors).to.deep.equal([]);
    const part = toolPart(chat, 'm1');
    expect(part.state).to.equal('approval-requested');
    expect(part.input).to.deep.equal({ note: 'x' });
    expect(await markerLines(marker)).to.deep.equal([]); // nothing ran yet
    return { chat, errors };
  }

  it("the turn ends waiting; the Chat's approval resumes the step: the tool runs once, the model goes on, one assistant message", async () => {
    const { chat, errors } = await askForApproval('approve-1');
    const approvalId = (toolPart(chat, 'm1') as { approval: { id: string } }).approval.id;
    await chat.addToolApprovalResponse({ id: approvalId, approved: true });
    await waitFor(() => chat.status === 'ready' && toolPart(chat, 'm1').state === 'output-available', 'the resumed turn');
    expect(errors).to.deep.equal([]);
    expect(await markerLines(marker)).to.deep.equal(['m1']);
    expect(chat.messages.map((m) => m.role)).to.deep.equal(['user', 'assistant']);
    const parts = chat.lastMessage!.parts;
    expect(parts.map((p) => p.type)).to.deep.equal(['step-start', 'dynamic-tool', 'step-start', 'text']);
    expect(toolPart(chat, 'm1').output).to.equal('marked');
    expect((parts[3] as { text: string }).text).to.equal('all done');
    const context = await sessions.open('acme', 'approve-1');
    expect(context.pendingStep).to.equal(undefined);
    expect(context.history.map((m) => m.role)).to.deep.equal(['user', 'assistant', 'tool', 'assistant']);
    // The next message is a new turn, as usual.
    await chat.sendMessage({ text: 'text: next' });
    expect(chat.status).to.equal('ready');
    expect(await markerLines(marker)).to.deep.equal(['m1']);
  });

  it('a denial does not run the tool: the part is output-denied, and the model gets the denial with its reason', async () => {
    const { chat, errors } = await askForApproval('deny-1');
    const approvalId = (toolPart(chat, 'm1') as { approval: { id: string } }).approval.id;
    await chat.addToolApprovalResponse({ id: approvalId, approved: false, reason: 'not on a Friday' });
    await waitFor(() => chat.status === 'ready' && toolPart(chat, 'm1').state === 'output-denied', 'the denied turn');
    expect(errors).to.deep.equal([]);
    expect(await markerLines(marker)).to.deep.equal([]);
    const context = await sessions.open('acme', 'deny-1');
    const toolMessage = context.history.find((m) => m.role === 'tool')!;
    expect(JSON.stringify(toolMessage.content)).to.include('not on a Friday');
    expect(chat.lastMessage!.parts.at(-1)).to.deep.include({ type: 'text', text: 'all done' });
  });

  /** The body the Chat sends for an approval answer, by hand. */
  function approvalBody(chatId: string, approvalId: string, approved = true): string {
    const assistant: UIMessage = {
      id: 'a1',
      role: 'assistant',
      parts: [{ type: 'step-start' }, { type: 'dynamic-tool', toolName: 'mark', toolCallId: 'm1', state: 'approval-responded', input: { note: 'x' }, approval: { id: approvalId, approved } }],
    };
    return JSON.stringify({ id: chatId, trigger: 'submit-message', messageId: 'a1', messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: SCRIPT }] }, assistant] });
  }

  function postRaw(body: string, key: string = KEYS.acme): Promise<Response> {
    return fetch(`${server.url}/api/chat`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body });
  }

  it('an approval id no call waits for is a 400; answers to a chat where nothing waits are a 404; a new message while a call waits is a 409', async () => {
    const { chat } = await askForApproval('unknown-1');
    const approvalId = (toolPart(chat, 'm1') as { approval: { id: string } }).approval.id;
    const unknown = await postRaw(approvalBody('unknown-1', `${approvalId}x`));
    expect(unknown.status).to.equal(400);
    expect(((await unknown.json()) as { error: { code: string } }).error.code).to.equal('unknown_approval');
    const nothing = await postRaw(approvalBody('never-asked', approvalId));
    expect(nothing.status).to.equal(404);
    expect(((await nothing.json()) as { error: { code: string } }).error.code).to.equal('no_pending_approval');
    const message = await postRaw(JSON.stringify({ id: 'unknown-1', trigger: 'submit-message', messages: [{ id: 'u2', role: 'user', parts: [{ type: 'text', text: 'text: hi' }] }] }));
    expect(message.status).to.equal(409);
    expect(((await message.json()) as { error: { code: string; message: string } }).error).to.deep.include({ code: 'approval_pending' });
    expect(await markerLines(marker)).to.deep.equal([]);
    // The step still waits, and the right id still resumes it.
    const ok = await postRaw(approvalBody('unknown-1', approvalId));
    expect(ok.status).to.equal(200);
    await ok.text();
    expect(await markerLines(marker)).to.deep.equal(['m1']);
  });

  it('two approvals of one call at once: one resumes, the other is a 409 resume_conflict before any tool runs; the tool ran once', async () => {
    const { chat } = await askForApproval('race-1');
    const approvalId = (toolPart(chat, 'm1') as { approval: { id: string } }).approval.id;
    const [a, b] = await Promise.all([postRaw(approvalBody('race-1', approvalId, true)), postRaw(approvalBody('race-1', approvalId, false))]);
    const statuses = [a.status, b.status].sort();
    expect(statuses).to.deep.equal([200, 409]);
    const loser = a.status === 409 ? a : b;
    const winner = a.status === 409 ? b : a;
    const error = ((await loser.json()) as { error: { code: string; message: string } }).error;
    expect(error.code).to.equal('resume_conflict');
    expect(error.message).to.match(/in progress; nothing was run/);
    const chunks = sseData(await winner.text()) as { type: string }[];
    expect(chunks.at(-2)).to.deep.include({ type: 'finish' });
    const lines = await markerLines(marker);
    expect(lines.length).to.be.at.most(1);
    expect(lines).to.deep.equal(winner === a ? ['m1'] : []); // a approves, b denies
    // And afterwards nothing waits.
    const again = await postRaw(approvalBody('race-1', approvalId));
    expect(again.status).to.equal(404);
  });

  it("the continuation streams only the new chunks: start with the assistant message's id, the call's output, the next step; known chunk types only", async () => {
    const first = sseData(await (await postRaw(JSON.stringify({ id: 'wire-1', trigger: 'submit-message', messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: SCRIPT }] }] }))).text()) as { type: string; approvalId?: string }[];
    expect(first.map((c) => (typeof c === 'string' ? c : c.type))).to.deep.equal(['start', 'start-step', 'tool-input-start', 'tool-input-delta', 'tool-input-available', 'finish-step', 'tool-approval-request', 'finish', '[DONE]']);
    const request = first.find((c) => c.type === 'tool-approval-request')!;
    expect(request).to.deep.include({ toolCallId: 'm1' });
    expect(first.find((c) => c.type === 'finish')).to.deep.include({ finishReason: 'tool-calls' });
    const second = sseData(await (await postRaw(approvalBody('wire-1', request.approvalId!))).text()) as { type: string; messageId?: string }[];
    expect(second[0]).to.deep.equal({ type: 'start', messageId: 'a1' });
    expect(second.map((c) => (typeof c === 'string' ? c : c.type))).to.deep.equal(['start', 'tool-input-available', 'tool-output-available', 'start-step', 'text-start', 'text-delta', 'text-end', 'finish-step', 'finish', '[DONE]']);
    await expectKnownChunks([...first, ...second]);
    // A denial is the chunk the AI SDK has for it.
    const third = sseData(await (await postRaw(JSON.stringify({ id: 'wire-2', trigger: 'submit-message', messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: SCRIPT }] }] }))).text()) as { type: string; approvalId?: string }[];
    const denied = sseData(await (await postRaw(approvalBody('wire-2', third.find((c) => c.type === 'tool-approval-request')!.approvalId!, false))).text()) as { type: string }[];
    expect(denied[2]).to.deep.equal({ type: 'tool-output-denied', toolCallId: 'm1' });
    await expectKnownChunks([...third, ...denied]);
  });

  it("a client that reloads during the continuation resumes it with the AI SDK's reconnectToStream: the call's part and what follows, no stream error", async () => {
    await server.close();
    sessions = memorySessions();
    server = await start(sessions, 300);
    const { chat } = await askForApproval('reload-1');
    const approvalId = (toolPart(chat, 'm1') as { approval: { id: string } }).approval.id;
    const answering = postRaw(approvalBody('reload-1', approvalId)); // the answering tab goes away: its response is never read
    await new Promise((resolve) => setTimeout(resolve, 100));
    const stream = await transport(server, KEYS.acme).reconnectToStream({ chatId: 'reload-1' });
    expect(stream).to.not.equal(null);
    let last: UIMessage | undefined;
    for await (const message of readUIMessageStream({ stream: stream!, terminateOnError: true })) last = message;
    const part = last!.parts.find((p) => p.type === 'dynamic-tool') as DynamicToolUIPart;
    expect(part).to.deep.include({ toolCallId: 'm1', state: 'output-available', output: 'marked' });
    expect(last!.parts.at(-1)).to.deep.include({ type: 'text', text: 'all done' });
    await (await answering).body?.cancel();
    expect(await markerLines(marker)).to.deep.equal(['m1']);
  });

  it('a pending call survives the server: with directory sessions, a new server resumes it with the same approval id', async () => {
    await server.close();
    const sessionFolder = join(folder, 'sessions');
    server = await start(directorySessions(sessionFolder));
    const { chat } = await askForApproval('restart-1');
    const approvalId = (toolPart(chat, 'm1') as { approval: { id: string } }).approval.id;
    await server.close();
    server = await start(directorySessions(sessionFolder));
    const resumed = await postRaw(approvalBody('restart-1', approvalId));
    expect(resumed.status).to.equal(200);
    const chunks = sseData(await resumed.text()) as { type: string }[];
    expect(chunks.map((c) => c.type)).to.include('tool-output-available');
    expect(await markerLines(marker)).to.deep.equal(['m1']);
  });

  it("tenant B cannot approve tenant A's call: the same request with B's key gets the 404 of a chat where nothing waits", async () => {
    const { chat } = await askForApproval('tenant-1');
    const approvalId = (toolPart(chat, 'm1') as { approval: { id: string } }).approval.id;
    const guess = await postRaw(approvalBody('tenant-1', approvalId), KEYS.globex);
    const missing = await postRaw(approvalBody('no-such-chat', approvalId), KEYS.globex);
    expect(guess.status).to.equal(404);
    expect(await guess.text()).to.equal(await missing.text());
    expect(await markerLines(marker)).to.deep.equal([]);
    const context = await sessions.open('acme', 'tenant-1');
    expect(context.pendingStep).to.not.equal(undefined);
  });
});
