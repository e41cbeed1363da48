import { expect } from 'chai';

import { Kernel } from '@kosong/core';
import { EchoChatProvider } from '@kosong/provider-echo';

import { createServer } from '../server.js';
import { chatBody } from './support.js';

describe('@kosong/server: createServer', () => {
  it('page: true serves the web page and the saved chats beside the chat route, with the handler\'s own auth and sessions', async () => {
    const kernel = new Kernel();
    kernel.tenants.define('acme', { provider: new EchoChatProvider() });
    const app = createServer({ kernel, auth: (request) => (request.headers.get('authorization') === 'Bearer k' ? 'acme' : undefined), page: true });
    await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const { port } = app.server.address() as { port: number };
      const url = `http://127.0.0.1:${port}`;
      const page = await fetch(`${url}/`);
      expect(page.status).to.equal(200);
      expect(page.headers.get('content-type')).to.match(/^text\/html/);
      const turn = await fetch(`${url}/api/chat`, { method: 'POST', headers: { authorization: 'Bearer k' }, body: chatBody('s1', 'text: kept') });
      await turn.text();
      const saved = await fetch(`${url}/api/chat/s1/messages`, { headers: { authorization: 'Bearer k' } });
      expect(saved.status).to.equal(200);
      expect(JSON.stringify(await saved.json())).to.include('kept');
      expect((await fetch(`${url}/api/chat/s1/messages`)).status).to.equal(401);
    } finally {
      await app.close();
      await kernel.dispose();
    }
  });

  it('refuses a page option that is not a boolean, and options it does not know', () => {
    const kernel = new Kernel();
    expect(() => createServer({ kernel, auth: () => 'acme', page: 'yes' as never })).to.throw(TypeError, /page must be a boolean/);
    expect(() => createServer({ kernel, auth: () => 'acme', pages: true } as never)).to.throw(TypeError, /unknown option "pages"/);
  });
});
