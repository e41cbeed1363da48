import { expect } from 'chai';

import { textPart } from '@kosong/core';
import { EchoChatProvider, MockChatProvider } from '@kosong/provider-echo';

import { KEYS, chatBody, post, startServer, type TestServer } from './support.js';

/** The JSON error of a response, with its status. */
async function errorOf(response: Response): Promise<{ status: number; code: string; message: string }> {
  expect(response.headers.get('content-type')).to.match(/^application\/json/);
  const { error } = (await response.json()) as { error: { code: string; message: string } };
  return { status: response.status, code: error.code, message: error.message };
}

describe('@kosong/server: bad input', () => {
  let server: TestServer;
  let provider: EchoChatProvider;

  beforeEach(async () => {
    provider = new EchoChatProvider();
    server = await startServer({ acme: provider, globex: new MockChatProvider([textPart('slow ')], { delayMs: 200 }) }, { maxBodyBytes: 2048 });
  });
  afterEach(() => server.close());

  it('a body over the size limit is a 413, with or without a Content-Length', async () => {
    const big = chatBody('c1', 'x'.repeat(4096));
    expect(await errorOf(await post(server, big))).to.deep.include({ status: 413, code: 'body_too_large' });
    // Streamed in chunks, without a declared length: cut off at the limit.
    const encoder = new TextEncoder();
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 8; i++) controller.enqueue(encoder.encode('x'.repeat(1024)));
        controller.close();
      },
    });
    const streamed = await fetch(`${server.url}/api/chat`, { method: 'POST', headers: { authorization: `Bearer ${KEYS.acme}` }, body, duplex: 'half' } as RequestInit);
    expect(await errorOf(streamed)).to.deep.include({ status: 413, code: 'body_too_large' });
    expect(provider.requests).to.have.length(0);
  });

  it('malformed JSON is a 400 saying so', async () => {
    const error = await errorOf(await post(server, '{"id": "c1", "messages": ['));
    expect(error).to.deep.include({ status: 400, code: 'malformed_json' });
    expect(error.message).to.match(/^The request body is not JSON: /);
  });

  it('a body that is not a useChat request is a 400 naming what is wrong', async () => {
    const user = { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'hi' }] };
    const cases: [unknown, RegExp][] = [
      [[1, 2], /must be a JSON object/],
      [{ messages: [user] }, /id must be a chat id/],
      [{ id: 'c1' }, /messages must be a non-empty array/],
      [{ id: 'c1', messages: [] }, /messages must be a non-empty array/],
      [{ id: 'c1', messages: [{ ...user, role: 'assistant' }] }, /an assistant message without approval responses/],
      [{ id: 'c1', messages: [{ id: 'u1', role: 'user' }] }, /must have parts/],
      [{ id: 'c1', messages: [{ ...user, parts: [] }] }, /has no parts/],
      [{ id: 'c1', messages: [{ ...user, parts: [{ type: 'text', text: 3 }] }] }, /text of the user message must be a string/],
      [{ id: 'c1', messages: [{ ...user, parts: [{ type: 'data-x', data: 1 }] }] }, /type that is not supported: "data-x"/],
      [{ id: 'c1', messages: [{ ...user, parts: [{ type: 'file', mediaType: 'application/pdf', url: 'data:,x' }] }] }, /not supported/],
      [{ id: 'c1', trigger: 'regenerate-message', messages: [user] }, /regenerate-message" is not supported/],
      [{ id: 'c1', trigger: 'resume-stream', messages: [user] }, /trigger must be "submit-message"/],
      [{ id: 'c1', trigger: 'submit-message', messageId: 'u1', messages: [user] }, /messageId \(an edited message\) is not supported/],
    ];
    for (const [body, reason] of cases) {
      const error = await errorOf(await post(server, JSON.stringify(body)));
      expect(error.status, JSON.stringify(body)).to.equal(400);
      expect(error.code).to.equal('bad_request');
      expect(error.message, JSON.stringify(body)).to.match(reason);
    }
    expect(provider.requests).to.have.length(0);
  });

  it('unknown routes are 404s; a wrong method is a 405 with Allow', async () => {
    for (const path of ['/', '/api', '/api/chats', '/api/chat/c1', '/api/chat/c1/stream/more', '/api/chat/c1/other']) {
      const response = await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${KEYS.acme}` } });
      expect(response.status, path).to.equal(404);
      expect((await errorOf(response)).code).to.equal('not_found');
    }
    const get = await fetch(`${server.url}/api/chat`, { headers: { authorization: `Bearer ${KEYS.acme}` } });
    expect(get.status).to.equal(405);
    expect(get.headers.get('allow')).to.equal('POST');
    const postStream = await post(server, '{}', KEYS.acme, '/api/chat/c1/stream');
    expect(postStream.status).to.equal(405);
    expect(postStream.headers.get('allow')).to.equal('GET, DELETE');
    const getStop = await fetch(`${server.url}/api/chat/c1/stop`, { headers: { authorization: `Bearer ${KEYS.acme}` } });
    expect(getStop.status).to.equal(405);
    expect(getStop.headers.get('allow')).to.equal('POST');
    const del = await fetch(`${server.url}/api/chat`, { method: 'DELETE', headers: { authorization: `Bearer ${KEYS.acme}` } });
    expect(del.status).to.equal(405);
  });

  it('a second message while the chat has a turn running is a 409; after the turn it is taken', async () => {
    const first = await post(server, chatBody('busy', 'go'), KEYS.globex);
    expect(first.status).to.equal(200);
    const second = await post(server, chatBody('busy', 'again'), KEYS.globex);
    expect(await errorOf(second)).to.deep.include({ status: 409, code: 'turn_running' });
    await first.text();
    const third = await post(server, chatBody('busy', 'again'), KEYS.globex);
    expect(third.status).to.equal(200);
    await third.text();
  });
});
