/**
 * Every builder refuses options it does not know (issue 21 item 1): a misspelt `filter` would offer
 * every tool of the server, a misspelt `headers` would call it without its credentials. Refused
 * with a `TypeError` naming the option, before any process or session starts.
 */
import { expect } from 'chai';
import { McpToolset, mcpPlugin } from '../index.js';
import { killLeftovers, stdioServer } from './support.js';

async function refusal(make: () => unknown): Promise<Error> {
  try {
    await make();
  } catch (error) {
    return error as Error;
  }
  throw new Error('the unknown option was accepted');
}

describe('McpToolset and mcpPlugin refuse options they do not know', () => {
  after(() => {
    expect(killLeftovers(), 'no server was started').to.deep.equal([]);
  });

  it('McpToolset.connect and new McpToolset: a TypeError naming the option, nothing started', async () => {
    const error = await refusal(() => McpToolset.connect({ server: stdioServer(), filters: ['add'] } as never));
    expect(error).to.be.instanceOf(TypeError);
    expect(error.message).to.equal(
      'McpToolset: unknown option "filters" (its options: server, name, prefix, filter, timeoutMs, maxOutputChars, maxBlobBytes, roots, sampling, elicitation, onProgress, onLog, logLevel, onResourceUpdated, onListChanged, onDebug, maxMessageBytes, describeTool, replay, onToolsChanged, onError)',
    );
    expect(() => new McpToolset({ server: stdioServer(), timeout: 5 } as never)).to.throw(TypeError, /^McpToolset: unknown option "timeout"/);
  });

  it("the server's options, by its type", async () => {
    const stdio = await refusal(() => McpToolset.connect({ server: { ...stdioServer(), environment: { TOKEN: 'x' } } as never }));
    expect(stdio).to.be.instanceOf(TypeError);
    expect(stdio.message).to.equal('McpToolset: a stdio server: unknown option "environment" (its options: type, command, args, env, cwd, stderr)');
    const http = await refusal(() => McpToolset.connect({ server: { type: 'http', url: 'http://127.0.0.1:1/mcp', header: { authorization: 'x' } } as never }));
    expect(http.message).to.equal('McpToolset: an http server: unknown option "header" (its options: type, url, headers, authProvider, sseFallback)');
    expect(() => new McpToolset({ server: { type: 'websocket', url: 'x' } as never })).to.throw(TypeError, /Unknown MCP server type: "websocket"/);
    expect(() => new McpToolset({ server: undefined as never })).to.throw(TypeError, /server must be an object/);
    expect(() => new McpToolset(null as never)).to.throw(TypeError, 'McpToolset: the options must be an object');
  });

  it('mcpPlugin: its own options (name, bindToolset) and the toolset\'s; nothing else', () => {
    expect(() => mcpPlugin({ name: 'fs', server: stdioServer(), bindToolsets: false } as never)).to.throw(TypeError, /^mcpPlugin: unknown option "bindToolsets" \(its options: server, name, .*, bindToolset\)$/);
    expect(() => mcpPlugin({ name: 'fs', server: { ...stdioServer(), cmd: 'x' } as never })).to.throw(TypeError, /a stdio server: unknown option "cmd"/);
    const plugin = mcpPlugin({ name: 'fs', server: stdioServer(), bindToolset: false, prefix: 'fs_' });
    expect(plugin.toolset.connected).to.equal(false); // made, not started
  });

  it('the client-feature options: bad roots, sampling, callbacks, logLevel and maxBlobBytes are TypeErrors naming them', () => {
    const make = (extra: object) => () => new McpToolset({ server: stdioServer(), ...extra } as never);
    const provider = { generate: () => undefined };
    expect(make({ roots: 'file:///x' })).to.throw(TypeError, 'McpToolset: roots must be a list of { uri, name? }');
    expect(make({ roots: [{ url: 'file:///x' }] })).to.throw(TypeError, /a root must be \{ uri: string, name\?: string \}, not \{"url":"file:\/\/\/x"\}/);
    expect(make({ roots: [{ uri: 'file:///x', name: 3 }] })).to.throw(TypeError, /a root must be/);
    expect(make({ sampling: { provider, aprove: () => true } })).to.throw(TypeError, /^McpToolset: sampling: unknown option "aprove"/);
    expect(make({ sampling: { approve: () => true } })).to.throw(TypeError, 'McpToolset: sampling.provider must be a ChatProvider');
    expect(make({ sampling: { provider, approve: true } })).to.throw(TypeError, 'McpToolset: sampling.approve must be a function');
    expect(make({ sampling: { provider, maxTokens: 0 } })).to.throw(TypeError, 'McpToolset: sampling.maxTokens must be a positive integer');
    for (const name of ['elicitation', 'onProgress', 'onLog', 'onResourceUpdated', 'onListChanged', 'onDebug']) {
      expect(make({ [name]: 'yes' })).to.throw(TypeError, `McpToolset: ${name} must be a function`);
    }
    expect(make({ logLevel: 'verbose' })).to.throw(TypeError, /^McpToolset: logLevel must be one of debug, info, .*, not "verbose"$/);
    expect(make({ maxBlobBytes: -1 })).to.throw(TypeError, 'McpToolset: maxBlobBytes must be a non-negative integer');
    expect(make({ maxMessageBytes: 0 })).to.throw(TypeError, 'McpToolset: maxMessageBytes must be a positive integer');
    expect(make({ roots: [{ uri: 'file:///x', name: 'x' }], sampling: { provider, approve: () => true }, logLevel: 'info', maxBlobBytes: 0 })).not.to.throw();
  });
});
