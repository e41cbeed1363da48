/**
 * The legacy HTTP+SSE transport (spec revision 2024-11-05): `type: 'sse'`, and a streamable HTTP
 * server config falling back to it when the server answers the initialize POST with 400/404/405.
 * Against server-everything's SSE mode, and against an SDK `SSEServerTransport` server in this
 * process (to count what the client asked for and to end streams).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { z } from 'zod';
import { McpAuthorizationError, McpConnectionError, McpToolset } from '../index.js';
import { callTool, killLeftovers, startEverythingSse, textOf, waitFor, type HttpFixture } from './support.js';

/** A legacy SSE MCP server on 127.0.0.1 (`GET /sse`, `POST /message`), counting the requests it got. */
async function startSseServer(options: { readonly token?: string; readonly refuseAll?: number } = {}) {
  const transports = new Map<string, SSEServerTransport>();
  const seen = { probes: 0, streams: 0, posts: 0, refused: 0 };
  const http: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (options.refuseAll !== undefined) {
      seen.refused++;
      res.writeHead(options.refuseAll).end('refused');
      return;
    }
    if (options.token !== undefined && req.headers.authorization !== `Bearer ${options.token}`) {
      seen.refused++;
      res.writeHead(401, { 'www-authenticate': 'Bearer' }).end();
      return;
    }
    if (url.pathname === '/sse' && req.method === 'POST') {
      seen.probes++; // a streamable HTTP initialize: this server does not speak it
      res.writeHead(405, { allow: 'GET' }).end();
      return;
    }
    if (url.pathname === '/sse' && req.method === 'GET') {
      seen.streams++;
      const transport = new SSEServerTransport('/message', res);
      transports.set(transport.sessionId, transport);
      transport.onclose = () => transports.delete(transport.sessionId);
      const mcp = new McpServer({ name: 'sse-fixture', version: '1.0.0' });
      mcp.registerTool('shout', { description: 'upper-cases its text', inputSchema: { text: z.string() } }, ({ text }, extra) => ({
        content: [{ type: 'text' as const, text: `${text.toUpperCase()} (${String(extra.requestInfo?.headers.authorization ?? 'no token')})` }],
      }));
      void mcp.connect(transport);
      return;
    }
    if (url.pathname === '/message' && req.method === 'POST') {
      seen.posts++;
      const transport = transports.get(url.searchParams.get('sessionId') ?? '');
      if (!transport) {
        res.writeHead(404).end('no such session');
        return;
      }
      void transport.handlePostMessage(req, res);
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  return {
    url: `${base}/sse`,
    seen,
    get open() {
      return transports.size;
    },
    /** Ends every stream from the server's side (as a restart would). */
    async endStreams() {
      await Promise.all([...transports.values()].map((t) => t.close()));
    },
    async close() {
      await Promise.all([...transports.values()].map((t) => t.close()));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

type SseServer = Awaited<ReturnType<typeof startSseServer>>;

async function refusal(promise: Promise<unknown>): Promise<Error> {
  return promise.then(
    () => expect.fail('should not connect'),
    (error: unknown) => error as Error,
  );
}

describe('legacy HTTP+SSE transport', function () {
  this.timeout(20_000);

  describe('server-everything in SSE mode', () => {
    let everything: HttpFixture;
    const log: string[] = [];

    before(async () => {
      everything = await startEverythingSse(undefined, (line) => log.push(line));
    });

    after(async () => {
      await everything.kill();
      expect(killLeftovers(), 'server processes left alive').to.deep.equal([]);
    });

    it("type: 'sse' lists its tools and calls them; close ends the stream", async () => {
      const toolset = await McpToolset.connect({ name: 'everything', server: { type: 'sse', url: everything.config.url } });
      try {
        expect(toolset.transport).to.equal('sse');
        expect(toolset.tools.map((t) => t.name)).to.include.members(['echo', 'get-sum']);
        const echoed = await callTool(toolset, 'echo', { message: 'over sse' });
        expect(textOf(echoed.returnValue)).to.equal('Echo: over sse');
        const sum = await callTool(toolset, 'get-sum', { a: 2, b: 40 });
        expect(textOf(sum.returnValue)).to.match(/42/);
      } finally {
        await toolset.close();
      }
      await waitFor('the server to see the client leave', () => log.some((line) => line.startsWith('Client Disconnected')));
    });

    it("a streamable HTTP config of the SSE endpoint falls back to SSE (the server answers the POST with 404), and onDebug is told", async () => {
      const debug: string[] = [];
      const toolset = await McpToolset.connect({ name: 'everything', server: everything.config, onDebug: (m) => debug.push(m) });
      try {
        expect(everything.config.type).to.equal('http');
        expect(toolset.transport).to.equal('sse');
        expect(debug).to.include('MCP server "everything": the server refused streamable HTTP and speaks the legacy HTTP+SSE transport: using it from now on');
        expect(textOf((await callTool(toolset, 'echo', { message: 'fell back' })).returnValue)).to.equal('Echo: fell back');
      } finally {
        await toolset.close();
      }
    });

    it('with sseFallback: false, the 404 is an McpConnectionError', async () => {
      const error = await refusal(McpToolset.connect({ name: 'everything', server: { ...everything.config, type: 'http', sseFallback: false } }));
      expect(McpConnectionError.isInstance(error), String(error)).to.equal(true);
      expect(error.message).to.match(/^MCP server "everything": cannot connect: HTTP 404: /);
    });
  });

  describe('an SDK SSEServerTransport server', () => {
    let server: SseServer | undefined;

    afterEach(async () => {
      await server?.close();
      server = undefined;
    });

    it('falls back on 405 with the same headers; a reconnect goes to SSE directly', async () => {
      server = await startSseServer({ token: 'secret' });
      const toolset = await McpToolset.connect({ name: 'legacy', server: { type: 'http', url: server.url, headers: { authorization: 'Bearer secret' } } });
      try {
        expect(toolset.transport).to.equal('sse');
        expect(server.seen).to.include({ probes: 1, streams: 1, refused: 0 });
        expect(textOf((await callTool(toolset, 'shout', { text: 'hi' })).returnValue)).to.equal('HI (Bearer secret)');

        await server.endStreams(); // the server ends the session: the next call reconnects
        await waitFor('the toolset to see the connection lost', () => !toolset.connected);
        expect(textOf((await callTool(toolset, 'shout', { text: 'again' })).returnValue)).to.equal('AGAIN (Bearer secret)');
        expect(server.seen, 'no second streamable HTTP probe').to.include({ probes: 1, streams: 2, refused: 0 });
      } finally {
        await toolset.close();
      }
      await waitFor('the stream to close', () => server!.open === 0);
    });

    it('a 401 to the initialize POST does not fall back: McpAuthorizationError, no SSE stream asked for', async () => {
      server = await startSseServer({ token: 'secret' });
      const error = await refusal(McpToolset.connect({ name: 'legacy', server: { type: 'http', url: server.url, headers: { authorization: 'Bearer wrong' } } }));
      expect(McpAuthorizationError.isInstance(error), String(error)).to.equal(true);
      expect(server.seen).to.include({ refused: 1, streams: 0 });
    });

    it("type: 'sse' with a refused token is an McpAuthorizationError", async () => {
      server = await startSseServer({ token: 'secret' });
      const error = await refusal(McpToolset.connect({ name: 'legacy', server: { type: 'sse', url: server.url, headers: { authorization: 'Bearer wrong' } } }));
      expect(McpAuthorizationError.isInstance(error), String(error)).to.equal(true);
    });

    it('a server that refuses both transports: one McpConnectionError saying both', async () => {
      server = await startSseServer({ refuseAll: 404 });
      const error = await refusal(McpToolset.connect({ name: 'legacy', server: { type: 'http', url: server.url } }));
      expect(McpConnectionError.isInstance(error), String(error)).to.equal(true);
      expect(error.message).to.match(/^MCP server "legacy": cannot connect: streamable HTTP was refused \(.*404.*\), and the legacy SSE transport failed too: .*404/);
      expect(server.seen.refused).to.equal(2);
    });

    it('refuses unknown options of an sse server and a bad sseFallback', () => {
      expect(() => new McpToolset({ server: { type: 'sse', url: 'http://127.0.0.1:1/sse', sseFallback: true } as never })).to.throw(TypeError, 'McpToolset: an sse server: unknown option "sseFallback"');
      expect(() => new McpToolset({ server: { type: 'http', url: 'http://127.0.0.1:1/mcp', sseFallback: 'yes' } as never })).to.throw(TypeError, "an http server's sseFallback must be a boolean");
    });
  });
});
