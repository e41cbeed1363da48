import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import express from 'express';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { mcpAuthRouter, getOAuthProtectedResourceMetadataUrl } from '@modelcontextprotocol/sdk/server/auth/router.js';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import { InvalidGrantError, InvalidTokenError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { OAuthServerProvider } from '@modelcontextprotocol/sdk/server/auth/provider.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type { OAuthClientInformationFull } from '@modelcontextprotocol/sdk/shared/auth.js';
import { McpAuthorizationError, McpConnectionError, McpOAuthTokenProvider, McpToolset } from '../index.js';
import { callTool, textOf } from './support.js';

const CLIENT: OAuthClientInformationFull = { client_id: 'kosong-test', client_secret: 'sekret', redirect_uris: ['http://127.0.0.1/unused'] };

/** An OAuth-protected MCP server on 127.0.0.1 built on the SDK's auth router and bearer middleware. */
async function startOAuthServer() {
  const app = express();
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const base = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  const mcpUrl = new URL('/mcp', base);
  const valid = new Map<string, number>(); // token → expiry (ms)
  const refreshTokens = new Set<string>(['refresh-1']);
  const seenTokens: string[] = [];
  let refreshes = 0;
  const provider: OAuthServerProvider = {
    clientsStore: { getClient: (id) => (id === CLIENT.client_id ? CLIENT : undefined) },
    authorize: () => Promise.reject(new Error('no interactive authorization here')),
    challengeForAuthorizationCode: () => Promise.reject(new Error('no codes here')),
    exchangeAuthorizationCode: () => Promise.reject(new InvalidGrantError('no codes here')),
    exchangeRefreshToken: async (_client, token) => {
      if (!refreshTokens.has(token)) throw new InvalidGrantError('unknown refresh token');
      refreshes++;
      const access = `access-${randomUUID()}`;
      valid.set(access, Date.now() + 60_000);
      return { access_token: access, token_type: 'Bearer', expires_in: 60, refresh_token: token };
    },
    verifyAccessToken: async (token): Promise<AuthInfo> => {
      const expiry = valid.get(token);
      if (expiry === undefined) throw new InvalidTokenError('unknown token');
      return { token, clientId: CLIENT.client_id, scopes: [], expiresAt: Math.floor(expiry / 1000) };
    },
  };
  app.use(mcpAuthRouter({ provider, issuerUrl: base, resourceServerUrl: mcpUrl }));
  const transports = new Map<string, StreamableHTTPServerTransport>();
  app.all(
    '/mcp',
    express.json(),
    requireBearerAuth({ verifier: provider, resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(mcpUrl) }),
    async (req: IncomingMessage & { auth?: AuthInfo; body?: unknown }, res: ServerResponse) => {
      seenTokens.push(req.auth!.token);
      const id = req.headers['mcp-session-id'];
      let transport = typeof id === 'string' ? transports.get(id) : undefined;
      if (!transport) {
        const t = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (sid) => void transports.set(sid, t) });
        const mcp = new McpServer({ name: 'oauth-fixture', version: '1.0.0' });
        mcp.registerTool('whoami', { description: 'the caller\'s token' }, (extra) => ({ content: [{ type: 'text' as const, text: extra.authInfo?.token ?? 'none' }] }));
        await mcp.connect(t);
        transport = t;
      }
      await transport.handleRequest(req, res, req.body);
    },
  );
  return {
    url: mcpUrl,
    base,
    valid,
    seenTokens,
    get refreshes() {
      return refreshes;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())).then(() => server.closeAllConnections()),
    server,
  };
}

describe('McpToolset over HTTP with OAuth', function () {
  this.timeout(20_000);
  let oauth: Awaited<ReturnType<typeof startOAuthServer>>;
  const toolsets: McpToolset[] = [];

  beforeEach(async () => {
    oauth = await startOAuthServer();
  });
  afterEach(async () => {
    await Promise.all(toolsets.splice(0).map((t) => t.close()));
    oauth.server.closeAllConnections();
    await oauth.close();
  });

  function connect(server: ConstructorParameters<typeof McpToolset>[0]['server']) {
    const toolset = new McpToolset({ name: 'secure', server, timeoutMs: 10_000 });
    toolsets.push(toolset);
    return toolset;
  }

  it('calls with a valid token from the auth provider', async () => {
    oauth.valid.set('good', Date.now() + 60_000);
    const auth = new McpOAuthTokenProvider({ clientId: CLIENT.client_id, clientSecret: 'sekret', tokens: { access_token: 'good', token_type: 'Bearer' } });
    const toolset = connect({ type: 'http', url: oauth.url, authProvider: auth });
    await toolset.connect();
    const result = await callTool(toolset, 'whoami');
    expect(textOf(result.returnValue)).to.equal('good');
    expect(oauth.refreshes).to.equal(0);
  });

  it('without a token, connect fails with a typed McpAuthorizationError (no hang)', async () => {
    const toolset = connect({ type: 'http', url: oauth.url });
    const error = await toolset.connect().then(() => undefined, (e: unknown) => e);
    expect(McpAuthorizationError.isInstance(error), String(error)).to.equal(true);
    expect(McpConnectionError.isInstance(error)).to.equal(true);
    expect((error as Error).message).to.match(/^MCP server "secure": not authorized: /);
    expect(oauth.seenTokens).to.deep.equal([]);
    const result = await callTool(toolset, 'whoami');
    expect(result.returnValue.isError).to.equal(true);
    expect(result.returnValue.message).to.match(/not authorized/);
  });

  it('refreshes an expired token with the refresh token and calls again', async () => {
    oauth.valid.set('stale', Date.now() - 1_000);
    const saved: string[] = [];
    const auth = new McpOAuthTokenProvider({
      clientId: CLIENT.client_id,
      clientSecret: 'sekret',
      tokens: { access_token: 'stale', token_type: 'Bearer', refresh_token: 'refresh-1' },
      onTokens: (tokens) => saved.push(tokens.access_token),
    });
    const toolset = connect({ type: 'http', url: oauth.url, authProvider: auth });
    await toolset.connect();
    expect(oauth.refreshes).to.equal(1);
    expect(saved).to.have.length(1);
    const result = await callTool(toolset, 'whoami');
    expect(textOf(result.returnValue)).to.equal(saved[0]);
    expect(auth.tokens().refresh_token).to.equal('refresh-1');
  });

  it('a refused refresh is an McpAuthorizationError', async () => {
    const auth = new McpOAuthTokenProvider({ clientId: CLIENT.client_id, clientSecret: 'sekret', tokens: { access_token: 'nope', token_type: 'Bearer', refresh_token: 'revoked' } });
    const toolset = connect({ type: 'http', url: oauth.url, authProvider: auth });
    const error = await toolset.connect().then(() => undefined, (e: unknown) => e);
    expect(McpAuthorizationError.isInstance(error), String(error)).to.equal(true);
    expect(oauth.refreshes).to.equal(0);
  });

  it('a redirect to another port does not carry the Authorization header', async () => {
    const seen: IncomingHttpHeaders[] = [];
    const other = createServer((req, res) => {
      seen.push(req.headers);
      res.writeHead(500).end();
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const otherUrl = `http://127.0.0.1:${(other.address() as AddressInfo).port}/mcp`;
    const redirector = createServer((_req, res) => res.writeHead(307, { location: otherUrl }).end());
    await new Promise<void>((resolve) => redirector.listen(0, '127.0.0.1', resolve));
    try {
      oauth.valid.set('good', Date.now() + 60_000);
      const url = `http://127.0.0.1:${(redirector.address() as AddressInfo).port}/mcp`;
      const auth = new McpOAuthTokenProvider({ clientId: CLIENT.client_id, tokens: { access_token: 'good', token_type: 'Bearer' } });
      for (const server of [{ type: 'http' as const, url, authProvider: auth }, { type: 'http' as const, url, headers: { authorization: 'Bearer good' } }]) {
        const error = await connect(server).connect().then(() => undefined, (e: unknown) => e);
        expect(McpConnectionError.isInstance(error), String(error)).to.equal(true);
        expect((error as Error).message).to.match(/not followed \(redirectPolicy: 'same-origin'\)/);
      }
      expect(seen, 'requests that reached the other origin').to.deep.equal([]);
      for (const headers of seen) expect(headers.authorization, 'Authorization sent to another origin').to.equal(undefined);
    } finally {
      other.closeAllConnections();
      redirector.closeAllConnections();
      await Promise.all([new Promise((r) => other.close(r)), new Promise((r) => redirector.close(r))]);
    }
  });

  it('refuses an authProvider that is not one', () => {
    expect(() => new McpToolset({ name: 'x', server: { type: 'http', url: 'http://127.0.0.1:1/mcp', authProvider: {} as never } })).to.throw(TypeError, /authProvider/);
    expect(() => new McpOAuthTokenProvider({ clientId: 'c', tokens: { access_token: 'a', token_type: 'Bearer' }, clientSecrets: 'x' } as never)).to.throw(TypeError, /clientSecrets/);
  });
});
