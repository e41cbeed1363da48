import { expect } from 'chai';
import { mkdtemp, mkdir, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { EchoChatProvider } from '@kosong/provider-echo';

import { createSavedChatHandler } from '../page-routes.js';
import { directorySessions, isValidChatId, memorySessions } from '../sessions.js';
import { KEYS, chatBody, post, startServer, type TestServer } from './support.js';

/** Every path under `dir`, relative, sorted. */
async function tree(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true });
  return entries.map(String).sort();
}

const ACME_FOLDER = `t-${Buffer.from('acme').toString('hex')}`;

describe('@kosong/server: sessions in a folder of JSONL files', () => {
  let parent: string;
  let folder: string;
  let server: TestServer;
  let errors: unknown[];

  beforeEach(async () => {
    parent = await mkdtemp(join(tmpdir(), 'kosong-server-'));
    folder = join(parent, 'sessions');
    errors = [];
    server = await startServer({ acme: new EchoChatProvider(), globex: new EchoChatProvider() }, { sessions: directorySessions(folder), onError: (error) => errors.push(error) });
  });
  afterEach(async () => {
    await server.close();
    await rm(parent, { recursive: true, force: true });
  });

  it('keeps each chat in <folder>/t-<tenant hex>/<id>.jsonl, and a server started again goes on from it', async () => {
    const response = await post(server, chatBody('chat-1', 'text: remembered'));
    expect(response.status).to.equal(200);
    await response.text();
    const file = join(folder, ACME_FOLDER, 'chat-1.jsonl');
    expect(await readFile(file, 'utf8')).to.include('remembered');

    await server.close();
    const provider = new EchoChatProvider();
    server = await startServer({ acme: provider, globex: new EchoChatProvider() }, { sessions: directorySessions(folder) });
    const again = await post(server, chatBody('chat-1', 'text: and more'));
    await again.text();
    expect(provider.requests.at(-1)!.historyLength).to.equal(3); // user, assistant, the new user message
  });

  it('a chat id with ../ or / (or . first, or encoded) is refused with a 400, and nothing is written outside the folder', async () => {
    for (const id of ['../escape', '..', '.', 'a/b', '/etc/passwd', '..\\escape', '.hidden', 'x'.repeat(129), '', 'a b', 'ü']) {
      const response = await post(server, chatBody(id, 'text: hi'));
      expect(response.status, JSON.stringify(id)).to.equal(400);
      expect(((await response.json()) as { error: { message: string } }).error.message).to.include('id must be a chat id');
    }
    for (const path of ['..%2Fescape', 'a%2Fb', '%2E%2E', '.hidden', '%2Fetc%2Fpasswd']) {
      const response = await fetch(`${server.url}/api/chat/${path}/stream`, { headers: { authorization: `Bearer ${KEYS.acme}` } });
      expect([400, 404], path).to.include(response.status); // 404 where the URL parser itself resolved `..`
      expect(response.status, path).to.not.equal(204);
    }
    expect(await readdir(parent)).to.deep.equal([]); // the sessions folder was not even created
    const ok = await post(server, chatBody('fine.id-1_2', 'text: hi'));
    await ok.text();
    expect(await readdir(parent)).to.deep.equal(['sessions']);
    expect(await tree(folder)).to.deep.equal([ACME_FOLDER, `${ACME_FOLDER}/fine.id-1_2.jsonl`, `${ACME_FOLDER}/fine.id-1_2.jsonl.lock`]);
  });

  it('never follows a symbolic link: a tenant folder or a session file that is one is refused, and nothing is written where it points', async () => {
    const outside = join(parent, 'outside');
    await mkdir(outside);
    await mkdir(folder);
    await symlink(outside, join(folder, ACME_FOLDER));
    const response = await post(server, chatBody('chat-1', 'text: hi'));
    expect(response.status).to.equal(500);
    expect(await response.json()).to.deep.equal({ error: { code: 'internal', message: 'The request failed on the server' } }); // no path, no detail
    expect(String(errors[0])).to.include('not a plain folder');
    expect(await readdir(outside)).to.deep.equal([]);

    const globexFolder = join(folder, `t-${Buffer.from('globex').toString('hex')}`);
    await mkdir(globexFolder);
    const target = join(outside, 'target.jsonl');
    await writeFile(target, '');
    await symlink(target, join(globexFolder, 'chat-2.jsonl'));
    const linked = await post(server, chatBody('chat-2', 'text: hi'), KEYS.globex);
    expect(linked.status).to.equal(500);
    expect((errors[1] as { problem?: string }).problem).to.equal('unsafe-file');
    expect(await readFile(target, 'utf8')).to.equal('');
  });

  it('reading a saved chat that does not exist makes nothing: no file, no lock, no folder; one that exists is read', async () => {
    const sessions = directorySessions(folder);
    const read = createSavedChatHandler({ auth: () => 'acme', sessions });
    try {
      for (let i = 0; i < 50; i++) {
        const response = await read(new Request(`http://127.0.0.1/api/chat/guess-${i}/messages`));
        expect(response?.status).to.equal(200);
        expect(await response!.json()).to.deep.equal({ id: `guess-${i}`, messages: [] });
      }
      expect(await tree(parent).catch(() => [])).to.deep.equal([], 'nothing made for 50 guessed ids');
      const stored = await post(server, chatBody('chat-2', 'text: kept'));
      await stored.text();
      await server.close(); // its sessions release the chat's lock
      const saved = await read(new Request('http://127.0.0.1/api/chat/chat-2/messages'));
      expect(saved?.status).to.equal(200);
      const { messages } = (await saved!.json()) as { messages: { role: string }[] };
      expect(messages.map((m) => m.role)).to.deep.equal(['user', 'assistant']);
    } finally {
      await sessions.close();
    }
  });

  it('memory sessions: peek gives an open chat and nothing for any other, making none', async () => {
    const sessions = memorySessions();
    expect(await sessions.peek!('acme', 'never')).to.equal(undefined);
    const opened = await sessions.open('acme', 'chat');
    expect(await sessions.peek!('acme', 'chat')).to.equal(opened);
    expect(await sessions.peek!('globex', 'chat')).to.equal(undefined, "another tenant's chat of the same id is another chat");
    expect(await sessions.peek!('acme', '../x')).to.equal(undefined);
    await sessions.close();
  });

  it('isValidChatId takes what the AI SDK generates and nothing that could be a path', () => {
    for (const id of ['abc', 'Zx09_-', 'chat.1', 'a'.repeat(128), 'kEYcRvV0UYQkXrbT']) expect(isValidChatId(id), id).to.equal(true);
    for (const id of ['', '.', '..', '../a', 'a/b', 'a\\b', '.a', 'a\u0000', 'a'.repeat(129), 1, null, undefined]) expect(isValidChatId(id), String(id)).to.equal(false);
  });
});
