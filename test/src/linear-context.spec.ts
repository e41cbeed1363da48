import { ContextCorruptedError, LinearContext, textPart, toolCall, type Message } from '@kosong/core';
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { appendFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const user = (text: string): Message => ({ role: 'user', content: [textPart(text)] });
const assistant = (text: string): Message => ({ role: 'assistant', content: [textPart(text)] });

describe('LinearContext', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kosong-context-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('keeps history in memory without a file (kosong test_linear_context)', async () => {
    const context = new LinearContext();
    expect(context.history).to.deep.equal([]);
    await context.append(user('abc'), assistant('def'));
    expect(context.history).to.deep.equal([user('abc'), assistant('def')]);
  });

  it('writes the Python kosong JSONL format (kosong test_linear_context_with_jsonl_storage)', async () => {
    const path = join(dir, 'history.jsonl');
    const context = new LinearContext(path);
    await context.append(user('abc'));
    await context.append(assistant('def'));
    await context.close();
    expect(await readFile(path, 'utf8')).to.equal('{"role":"user","content":"abc"}\n{"role":"assistant","content":"def"}\n');
  });

  it('restores messages and the token count', async () => {
    const path = join(dir, 'history.jsonl');
    const context = new LinearContext(path);
    const withCall: Message = { role: 'assistant', content: [], toolCalls: [toolCall('c1', 'read', '{"path":"a"}')] };
    await context.append(user('hi'), withCall, { role: 'tool', content: [textPart('ok')], toolCallId: 'c1' });
    await context.markTokenCount(42);
    await context.close();

    const restored = new LinearContext(path);
    expect(await restored.restore()).to.deep.equal({ messages: 3, recoveredTornLine: false });
    expect(restored.history).to.deep.equal(context.history);
    expect(restored.tokenCount).to.equal(42);
  });

  it('treats a missing file as an empty history, and refuses to restore into a used context', async () => {
    const context = new LinearContext(join(dir, 'nope.jsonl'));
    expect(await context.restore()).to.deep.equal({ messages: 0, recoveredTornLine: false });
    await context.append(user('x'));
    await context.close();
    let caught: unknown;
    await context.restore().catch((e: unknown) => (caught = e));
    expect(caught).to.be.instanceOf(Error).with.property('message').that.contains('already has messages');
  });

  it('cuts off a torn last line and keeps appending after it', async () => {
    const path = join(dir, 'torn.jsonl');
    await writeFile(path, '{"role":"user","content":"one"}\n{"role":"assistant","content":"tw');
    const context = new LinearContext(path);
    expect(await context.restore()).to.deep.equal({ messages: 1, recoveredTornLine: true });
    await context.append(assistant('two'));
    await context.close();
    expect(await readFile(path, 'utf8')).to.equal('{"role":"user","content":"one"}\n{"role":"assistant","content":"two"}\n');
  });

  it('keeps a complete last line that lost only its newline', async () => {
    const path = join(dir, 'no-newline.jsonl');
    await writeFile(path, '{"role":"user","content":"one"}');
    const context = new LinearContext(path);
    expect(await context.restore()).to.deep.equal({ messages: 1, recoveredTornLine: false });
    await context.append(assistant('two'));
    await context.close();
    const reread = new LinearContext(path);
    await reread.restore();
    expect(reread.history).to.deep.equal([user('one'), assistant('two')]);
  });

  it('refuses a file corrupted in the middle, naming the line', async () => {
    const path = join(dir, 'bad.jsonl');
    await writeFile(path, '{"role":"user","content":"one"}\n{not json}\n{"role":"assistant","content":"two"}\n');
    const caught = await new LinearContext(path).restore().catch((e: unknown) => e);
    expect(ContextCorruptedError.isInstance(caught)).to.equal(true);
    expect(caught).to.include({ line: 2, path });
    expect((caught as Error).message).to.match(/line 2/);
  });

  it('refuses a well-formed JSON line that is not a message, naming the line and the field', async () => {
    const path = join(dir, 'bad-message.jsonl');
    await writeFile(path, '{"role":"user","content":"one"}\n{"role":"user","content":[{"type":"bogus"}]}\n');
    const caught = await new LinearContext(path).restore().catch((e: unknown) => e);
    expect(caught).to.include({ line: 2 });
    expect((caught as Error).message).to.contain('$.content[0].type');
  });

  it('appends a step in one write: concurrent appends keep their order', async () => {
    const path = join(dir, 'order.jsonl');
    const context = new LinearContext(path);
    await Promise.all(Array.from({ length: 20 }, (_, i) => context.append(user(`m${i}`), assistant(`r${i}`))));
    await context.close();
    const lines = (await readFile(path, 'utf8')).trim().split('\n');
    expect(lines).to.have.length(40);
    expect(lines.map((l) => (JSON.parse(l) as { content: string }).content)).to.deep.equal(
      Array.from({ length: 20 }, (_, i) => [`m${i}`, `r${i}`]).flat(),
    );
  });

  it('recovers every complete message after a writer is killed (SIGKILL) mid-append', async function () {
    this.timeout(20_000);
    const path = join(dir, 'crash.jsonl');
    // A child appends large messages as fast as it can; we kill it at a random moment.
    const script = `
      const { LinearContext } = await import(${JSON.stringify(import.meta.resolve('@kosong/core'))});
      const context = new LinearContext(${JSON.stringify(path)});
      const big = 'x'.repeat(200000);
      for (let i = 0; ; i++) {
        await context.append({ role: 'user', content: [{ type: 'text', text: 'm' + i + ':' + big }] });
        if (i === 3) process.stdout.write('ready\\n');
      }
    `;
    for (let round = 0; round < 3; round++) {
      await rm(path, { force: true });
      const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
      await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
      await new Promise((resolve) => setTimeout(resolve, 5 + round * 20));
      child.kill('SIGKILL');
      await new Promise((resolve) => child.once('exit', resolve));

      const text = await readFile(path, 'utf8');
      const complete = text.split('\n').slice(0, -1).length; // lines ended by a newline
      const restored = new LinearContext(path);
      const report = await restored.restore();
      expect(report.messages).to.equal(complete);
      expect(report.messages).to.be.greaterThan(3);
      restored.history.forEach((message, i) => {
        expect((message.content[0] as { text: string }).text.startsWith(`m${i}:`)).to.equal(true);
      });
      // The recovered file is clean: appending and restoring again works.
      await restored.append(assistant('after the crash'));
      await restored.close();
      const again = new LinearContext(path);
      expect((await again.restore()).messages).to.equal(complete + 1);
      // A kill rarely tears a line (the kernel finishes a write() in progress); a power cut can. So the
      // last round also adds a torn tail by hand, and the restore below must cut it off.
      if (round === 2) await appendFile(path, '{"role":"user","con');
    }
    const last = new LinearContext(path);
    expect((await last.restore()).recoveredTornLine).to.equal(true);
  });
});
