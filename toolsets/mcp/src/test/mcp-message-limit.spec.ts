/**
 * The per-message bound of the HTTP transport's fetch, on a real HTTP server on 127.0.0.1: JSON
 * bodies count whole, SSE streams per event.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { expect } from 'chai';
import { McpMessageTooLargeError } from '../index.js';
import { limitedFetch } from '../mcp-message-limit.js';

describe('limitedFetch (the bound on one server message over HTTP)', () => {
  let server: Server;
  let base: string;

  before(async () => {
    server = createServer((req, res) => {
      const url = new URL(req.url!, 'http://x');
      const count = Number(url.searchParams.get('count'));
      const size = Number(url.searchParams.get('size'));
      if (url.pathname === '/json') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ text: 'x'.repeat(size) }));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (let i = 0; i < count; i++) res.write(`event: message\r\ndata: ${'y'.repeat(size)}\r\n\r\n`);
      res.end();
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });

  after(() => {
    server.close();
  });

  async function read(path: string, maxBytes: number): Promise<{ body?: string; error?: unknown; reported: McpMessageTooLargeError[] }> {
    const reported: McpMessageTooLargeError[] = [];
    const response = await limitedFetch(maxBytes, (error) => reported.push(error))(base + path);
    try {
      return { body: await response.text(), reported };
    } catch (error) {
      return { error, reported };
    }
  }

  it('a JSON body within the bound passes whole; over it, the body fails and the error is reported', async () => {
    const within = await read('/json?size=1000', 1011);
    expect(within.body).to.have.length(1011); // {"text":"…"}
    expect(within.reported).to.deep.equal([]);
    const over = await read('/json?size=1000', 1010);
    expect(McpMessageTooLargeError.isInstance(over.error)).to.equal(true);
    expect(over.reported).to.have.length(1);
    expect(over.reported[0]!.message).to.equal("the server sent a message larger than 1010 bytes (the client's limit); the connection was given up");
  });

  it('an SSE stream counts per event: many small events pass, whatever their total; one big event fails', async () => {
    const many = await read('/sse?count=200&size=100', 200);
    expect(many.error).to.equal(undefined);
    expect(many.body!.split('\r\n\r\n')).to.have.length(201);
    const big = await read('/sse?count=2&size=300', 200);
    expect(McpMessageTooLargeError.isInstance(big.error)).to.equal(true);
    expect(big.reported).to.have.length(1);
  });
});
