import { expect } from 'chai';

import { Kernel, textPart, type ChatProvider } from '@kosong/core';
import type { TenantLimits } from '@kosong/core/kernel';
import { EchoChatProvider, MockChatProvider } from '@kosong/provider-echo';

import { createServer } from '../server.js';
import { memorySessions, type ChatSessions } from '../sessions.js';
import { chatBody, expectKnownChunks, localToolset, sseData, transport, type TestServer } from './support.js';

/** A server whose one tenant (`acme`, any request) has `limits`. */
async function limitedServer(limits: TenantLimits, provider: ChatProvider = new EchoChatProvider()): Promise<TestServer & { provider: ChatProvider; sessions: ChatSessions }> {
  const kernel = new Kernel();
  kernel.tenants.define('acme', { provider, toolset: localToolset(), limits });
  const sessions = memorySessions();
  const app = createServer({ kernel, auth: () => 'acme', sessions });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as { port: number };
  return {
    app,
    kernel,
    provider,
    sessions,
    url: `http://127.0.0.1:${port}`,
    async close() {
      await app.close();
      await kernel.dispose();
    },
  };
}

function postChat(server: TestServer, id: string, text: string): Promise<Response> {
  return fetch(`${server.url}/api/chat`, { method: 'POST', body: chatBody(id, text) });
}

describe("@kosong/server: the tenant's limits (429 with Retry-After)", () => {
  let server: (TestServer & { provider: ChatProvider; sessions: ChatSessions }) | undefined;
  afterEach(() => server?.close());

  it('a turn whose first step the pacing refuses is a 429 before any stream: Retry-After in whole seconds (rounded up), the reason as JSON', async () => {
    server = await limitedServer({ requestsPerMinute: 1, onLimit: 'refuse' });
    const first = await postChat(server, 'c1', 'text: one');
    expect(first.status).to.equal(200);
    await first.text();
    const second = await postChat(server, 'c2', 'text: two');
    expect(second.status).to.equal(429);
    expect(second.headers.get('content-type')).to.match(/^application\/json/);
    const { error } = (await second.json()) as { error: { code: string; limit: string; max: number; retryAfterMs: number; message: string } };
    expect(error).to.deep.include({ code: 'tenant_limit', limit: 'requestsPerMinute', max: 1 });
    expect(error.retryAfterMs).to.be.within(1, 60_000);
    expect(second.headers.get('retry-after')).to.equal(String(Math.ceil(error.retryAfterMs / 1000)));
    expect(error.message).to.include('requestsPerMinute');
    expect((server.provider as EchoChatProvider).requests).to.have.length(1); // the refused step asked nothing of the model
    // What a 429 leaves: the agent had added the user message before its first step was refused.
    expect((await server.sessions.open('acme', 'c2')).history.map((m) => m.role)).to.deep.equal(['user']);
  });

  it("the AI SDK's transport reports the 429's reason", async () => {
    server = await limitedServer({ requestsPerMinute: 1, onLimit: 'refuse' });
    await (await postChat(server, 'c1', 'text: one')).text();
    let caught: unknown;
    try {
      await transport(server, undefined).sendMessages({ chatId: 'c2', trigger: 'submit-message', messageId: undefined, abortSignal: undefined, messages: [{ id: 'u', role: 'user', parts: [{ type: 'text', text: 'text: two' }] }] });
    } catch (error) {
      caught = error;
    }
    expect((caught as Error).message).to.include('"code":"tenant_limit"');
  });

  it('a budget spent is a 429 tenant_budget_exceeded, with Retry-After until the period renews', async () => {
    server = await limitedServer({ budget: { usd: 0, per: 'day' } });
    const response = await postChat(server, 'c1', 'text: one');
    expect(response.status).to.equal(429);
    const { error } = (await response.json()) as { error: { code: string; retryAfterMs: number; per: string } };
    expect(error).to.deep.include({ code: 'tenant_budget_exceeded', per: 'day' });
    expect(Number(response.headers.get('retry-after'))).to.equal(Math.ceil(error.retryAfterMs / 1000));
    expect(Number(response.headers.get('retry-after'))).to.be.within(1, 86_400);
  });

  it('a limit that refuses a later step of the turn ends the stream with an error chunk (the stream had started)', async () => {
    server = await limitedServer({ requestsPerMinute: 1, onLimit: 'refuse' });
    const script = ['tool_call: {"id": "c1", "name": "add", "arguments": "{\\"a\\": 1, \\"b\\": 2}"}', '---', 'text: 3'].join('\n');
    const response = await postChat(server, 'mid', script);
    expect(response.status).to.equal(200);
    const chunks = sseData(await response.text()) as { type: string; errorText?: string }[];
    await expectKnownChunks(chunks);
    expect(chunks.map((c) => c.type)).to.include('tool-output-available');
    const error = chunks.at(-2)!;
    expect(error.type).to.equal('error');
    expect(error.errorText).to.include('requestsPerMinute');
  });

  it('a concurrency cap that refuses has no time to give: a 429 without Retry-After, retryAfterMs null', async () => {
    server = await limitedServer({ maxConcurrentSteps: 1, onLimit: 'refuse' }, new MockChatProvider(Array.from({ length: 10 }, (_, i) => textPart(`w${i} `)), { delayMs: 30 }));
    const running = await postChat(server, 'c1', 'go');
    expect(running.status).to.equal(200);
    const refused = await postChat(server, 'c2', 'go');
    expect(refused.status).to.equal(429);
    expect(refused.headers.get('retry-after')).to.equal(null);
    expect(((await refused.json()) as { error: unknown }).error).to.deep.include({ code: 'tenant_limit', limit: 'maxConcurrentSteps', retryAfterMs: null });
    await running.text();
  });
});
