/**
 * Tenant-keyed MCP connections: each tenant's servers and tokens are its own, one connection per
 * server shared by the tenant's steps, closed when the tenant is removed. Against MCP servers on
 * 127.0.0.1 (the SDK's McpServer over streamable HTTP) that accept one bearer token each and record
 * which token made every request and every call.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { definePlugin, Kernel, textPart, type ToolReturnValue } from '@kosong/core';
import { EchoChatProvider } from '@kosong/provider-echo';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
import { defineMcpTenant, McpConnectionError, McpTenantToolset } from '../index.js';
import { callTool, textOf, waitFor } from './support.js';

/** A streamable HTTP MCP server that serves only `token`, and counts its open sessions and requests. */
async function startTokenServer(label: string, token: string) {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const calls: { tag: string; token: string | undefined }[] = [];
  const requestTokens: (string | undefined)[] = [];
  let openRequests = 0;
  let refused = 0;
  const http: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const authorization = req.headers.authorization;
    requestTokens.push(authorization);
    if (authorization !== `Bearer ${token}`) {
      refused++;
      res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'invalid_token' }));
      return;
    }
    openRequests++;
    res.on('close', () => openRequests--);
    void (async () => {
      const id = req.headers['mcp-session-id'];
      let transport = typeof id === 'string' ? sessions.get(id) : undefined;
      if (!transport) {
        const created = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (sid) => void sessions.set(sid, created) });
        created.onclose = () => void (created.sessionId !== undefined && sessions.delete(created.sessionId));
        const mcp = new McpServer({ name: label, version: '1.0.0' });
        mcp.registerTool('whoami', { description: 'who is called, by whom', inputSchema: { tag: z.string() } }, ({ tag }, extra) => {
          const seen = extra.requestInfo?.headers.authorization;
          calls.push({ tag, token: typeof seen === 'string' ? seen : undefined });
          return { content: [{ type: 'text' as const, text: `${label} ${String(seen)} ${tag}` }] };
        });
        mcp.registerTool(`${label}_only`, { description: `a tool only ${label} has` }, () => ({ content: [{ type: 'text' as const, text: label }] }));
        await mcp.connect(created);
        transport = created;
      }
      await transport.handleRequest(req, res);
    })().catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(error));
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
  return {
    url,
    calls,
    requestTokens,
    get openSessions() {
      return sessions.size;
    },
    get openRequests() {
      return openRequests;
    },
    get refused() {
      return refused;
    },
    async close() {
      await Promise.all([...sessions.values()].map((t) => t.close()));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

type TokenServer = Awaited<ReturnType<typeof startTokenServer>>;

function echoPlugin(provider: EchoChatProvider) {
  return definePlugin({ name: 'echo', setup: (ctx) => ctx.bindChatProvider('echo', provider) });
}

/** The echo script of a step that calls `whoami` with `tag`. */
function whoamiScript(tag: string): string {
  return `tool_call: ${JSON.stringify({ id: `c-${tag}`, name: 'whoami', arguments: JSON.stringify({ tag }) })}`;
}

describe('tenant-keyed MCP connections', () => {
  let acmeServer: TokenServer;
  let globexServer: TokenServer;
  const kernels: Kernel[] = [];

  beforeEach(async () => {
    [acmeServer, globexServer] = await Promise.all([startTokenServer('acme', 'token-acme'), startTokenServer('globex', 'token-globex')]);
  });

  afterEach(async () => {
    await Promise.all(kernels.splice(0).map((k) => k.dispose()));
    await Promise.all([acmeServer.close(), globexServer.close()]);
  });

  const acmeServers = () => ({ crm: { server: { type: 'http' as const, url: acmeServer.url, headers: { authorization: 'Bearer token-acme' } } } });
  const globexServers = () => ({ crm: { server: { type: 'http' as const, url: globexServer.url, headers: { authorization: 'Bearer token-globex' } } } });

  it('200 concurrent steps of two tenants: each call reaches its tenant\'s server with its token, over one connection per tenant; removal closes it', async function () {
    this.timeout(30_000);
    const provider = new EchoChatProvider();
    const kernel = new Kernel();
    kernels.push(kernel);
    await kernel.use(echoPlugin(provider));
    await defineMcpTenant(kernel.tenants, 'acme', { mcp: acmeServers() });
    await defineMcpTenant(kernel.tenants, 'globex', { mcp: globexServers() });

    const tenants = ['acme', 'globex'] as const;
    const steps = Array.from({ length: 200 }, (_, i) => ({ tenant: tenants[i % 2]!, tag: `${tenants[i % 2]}-${i}` }));
    const results = await Promise.all(
      steps.map(async ({ tenant, tag }) => {
        const result = await kernel.runner({ tenant }).step({ systemPrompt: tenant, history: [{ role: 'user', content: [textPart(whoamiScript(tag))] }] });
        const [called] = await result.toolResults();
        return called!.returnValue;
      }),
    );

    results.forEach((returnValue: ToolReturnValue, i) => {
      const { tenant, tag } = steps[i]!;
      expect(returnValue.isError, textOf(returnValue)).to.equal(false);
      expect(textOf(returnValue)).to.equal(`${tenant} Bearer token-${tenant} ${tag}`);
    });
    // Every call arrived at its own tenant's server, with that tenant's token; nothing was refused.
    for (const [server, tenant] of [[acmeServer, 'acme'], [globexServer, 'globex']] as const) {
      expect(server.calls.map((c) => c.tag).sort()).to.deep.equal(steps.filter((s) => s.tenant === tenant).map((s) => s.tag).sort());
      expect(new Set(server.calls.map((c) => c.token))).to.deep.equal(new Set([`Bearer token-${tenant}`]));
      expect(new Set(server.requestTokens)).to.deep.equal(new Set([`Bearer token-${tenant}`]));
      expect(server.refused).to.equal(0);
      expect(server.openSessions, `${tenant}: one session for all its steps`).to.equal(1);
    }
    // Each tenant's steps were offered its own server's tools only.
    const offered = (tenant: string) => new Set(provider.requests.filter((r) => r.systemPrompt === tenant).map((r) => r.tools.map((t) => t.name).join(',')));
    expect(offered('acme')).to.deep.equal(new Set(['whoami,acme_only']));
    expect(offered('globex')).to.deep.equal(new Set(['whoami,globex_only']));

    // Removing a tenant closes its connection (its session, its open streams), and only its own.
    expect(acmeServer.openRequests, 'acme\'s standalone SSE stream').to.be.greaterThan(0);
    await kernel.tenants.remove('acme');
    await waitFor('acme\'s connections to close', () => acmeServer.openSessions === 0 && acmeServer.openRequests === 0);
    expect(globexServer.openSessions).to.equal(1);
    const after = await kernel.runner({ tenant: 'globex' }).step({ systemPrompt: 'globex', history: [{ role: 'user', content: [textPart(whoamiScript('late'))] }] });
    expect(textOf((await after.toolResults())[0]!.returnValue)).to.equal('globex Bearer token-globex late');
  });

  it('a tenant removed before any step ran closes its connection too', async () => {
    const kernel = new Kernel();
    kernels.push(kernel);
    const toolset = await defineMcpTenant(kernel.tenants, 'acme', { mcp: acmeServers() });
    expect(acmeServer.openSessions).to.equal(1);
    await kernel.tenants.remove('acme');
    expect(toolset.closed).to.equal(true);
    await waitFor('acme\'s connections to close', () => acmeServer.openSessions === 0 && acmeServer.openRequests === 0);
  });

  it('a step running while its tenant is removed finishes over the connection; the connection closes after it', async () => {
    const provider = new EchoChatProvider();
    const kernel = new Kernel();
    kernels.push(kernel);
    await kernel.use(echoPlugin(provider));
    const toolset = await defineMcpTenant(kernel.tenants, 'acme', { mcp: acmeServers() });
    const result = await kernel.runner({ tenant: 'acme' }).step({ systemPrompt: 'acme', history: [{ role: 'user', content: [textPart(whoamiScript('last'))] }] });
    const removed = kernel.tenants.remove('acme');
    expect(toolset.closed, 'not closed while its step runs').to.equal(false);
    expect(textOf((await result.toolResults())[0]!.returnValue)).to.equal('acme Bearer token-acme last');
    await removed;
    expect(toolset.closed).to.equal(true);
    await waitFor('acme\'s session to close', () => acmeServer.openSessions === 0);
  });

  it('a kernel disposed closes every tenant\'s connections', async () => {
    const kernel = new Kernel();
    await defineMcpTenant(kernel.tenants, 'acme', { mcp: acmeServers() });
    await defineMcpTenant(kernel.tenants, 'globex', { mcp: globexServers() });
    await kernel.dispose();
    await waitFor('every session to close', () => acmeServer.openSessions + globexServer.openSessions === 0);
  });

  it('a tenant with the other tenant\'s server but its own token is refused: McpConnectionError, nothing defined, nothing left open', async () => {
    const kernel = new Kernel();
    kernels.push(kernel);
    const error = await defineMcpTenant(kernel.tenants, 'globex', { mcp: { crm: { server: { type: 'http', url: acmeServer.url, headers: { authorization: 'Bearer token-globex' } } } } }).then(
      () => expect.fail('should not connect'),
      (e: unknown) => e,
    );
    expect(McpConnectionError.isInstance(error), String(error)).to.equal(true);
    expect((error as McpConnectionError).server).to.equal('crm');
    expect(kernel.tenants.has('globex')).to.equal(false);
    expect(acmeServer.refused).to.be.greaterThan(0);
    expect(acmeServer.openSessions).to.equal(0);
  });

  it('several servers of a tenant: tools in the servers\' order, each call routed to its server; a name two servers offer is refused unless prefixed', async () => {
    const both = await McpTenantToolset.connect({
      tenant: 'acme',
      servers: {
        first: { server: { type: 'http', url: acmeServer.url, headers: { authorization: 'Bearer token-acme' } } },
        second: { server: { type: 'http', url: globexServer.url, headers: { authorization: 'Bearer token-globex' } }, prefix: 'g_' },
      },
    });
    try {
      expect(both.servers).to.deep.equal(['first', 'second']);
      expect(both.tools.map((t) => t.name)).to.deep.equal(['whoami', 'acme_only', 'g_whoami', 'g_globex_only']);
      const call = (name: string, tag: string) => callTool(both, name, { tag });
      expect(textOf((await call('whoami', 'x')).returnValue)).to.equal('acme Bearer token-acme x');
      expect(textOf((await call('g_whoami', 'y')).returnValue)).to.equal('globex Bearer token-globex y');
      expect((await call('nope', 'z')).returnValue.message).to.equal('Tool `nope` not found');
      expect(both.server('second').name).to.equal('second');
      expect(() => both.server('third')).to.throw(TypeError, 'no MCP server "third" (its servers: first, second)');
    } finally {
      await both.close();
    }
    const conflict = await McpTenantToolset.connect({
      tenant: 'acme',
      servers: {
        first: { server: { type: 'http', url: acmeServer.url, headers: { authorization: 'Bearer token-acme' } } },
        second: { server: { type: 'http', url: globexServer.url, headers: { authorization: 'Bearer token-globex' } } },
      },
    }).then(
      () => expect.fail('should refuse the duplicate'),
      (e: unknown) => e,
    );
    expect(conflict).to.be.instanceOf(TypeError);
    expect((conflict as Error).message).to.equal('McpTenantToolset (tenant "acme"): tool `whoami` is offered by MCP servers "first" and "second": give one a prefix');
    await waitFor('the refused toolset\'s sessions to close', () => acmeServer.openSessions + globexServer.openSessions === 0);
  });

  it('refuses what it does not know, before anything connects', async () => {
    const kernel = new Kernel();
    kernels.push(kernel);
    const refusal = (promise: Promise<unknown>) => promise.then(() => expect.fail('should refuse'), (e: unknown) => e as Error);
    const unknown = await refusal(defineMcpTenant(kernel.tenants, 'acme', { mcp: acmeServers(), toolsett: {} } as never));
    expect(unknown).to.be.instanceOf(TypeError);
    expect(unknown.message).to.match(/^defineMcpTenant\("acme"\): unknown option "toolsett"/);
    const toolset = await refusal(defineMcpTenant(kernel.tenants, 'acme', { mcp: acmeServers(), toolset: {} } as never));
    expect(toolset.message).to.match(/a toolset cannot be given with mcp/);
    const inServer = await refusal(defineMcpTenant(kernel.tenants, 'acme', { mcp: { crm: { server: { type: 'http', url: acmeServer.url }, prefx: 'a_' } } } as never));
    expect(inServer.message).to.match(/^McpTenantToolset \(tenant "acme"\): server "crm": unknown option "prefx"/);
    const named = await refusal(defineMcpTenant(kernel.tenants, 'acme', { mcp: { crm: { server: { type: 'http', url: acmeServer.url }, name: 'x' } } } as never));
    expect(named.message).to.match(/unknown option "name"/);
    const empty = await refusal(defineMcpTenant(kernel.tenants, 'acme', { mcp: {} }));
    expect(empty.message).to.match(/servers is empty/);
    expect(acmeServer.requestTokens).to.deep.equal([]);
    expect(kernel.tenants.has('acme')).to.equal(false);
  });

  it('a tenant id already taken: the define fails and the new connections are closed', async () => {
    const kernel = new Kernel();
    kernels.push(kernel);
    kernel.tenants.define('acme');
    const error = await defineMcpTenant(kernel.tenants, 'acme', { mcp: acmeServers() }).then(
      () => expect.fail('should fail'),
      (e: unknown) => e as Error,
    );
    expect(error.message).to.match(/Tenant "acme" is already defined/);
    await waitFor('the session to close', () => acmeServer.openSessions === 0);
  });
});
