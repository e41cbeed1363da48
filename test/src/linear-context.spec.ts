import { ContextCorruptedError, ContextFileError, LinearContext, textPart, toolCall, type Message } from '@kosong/core';
import { expect } from 'chai';
import { execFileSync, spawn } from 'node:child_process';
import { appendFile, mkdtemp, readdir, readFile, rename, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sinon from 'sinon';

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

  it('cuts off a torn last line, keeps it beside the file, and keeps appending after it', async () => {
    const path = join(dir, 'torn.jsonl');
    await writeFile(path, '{"role":"user","content":"one"}\n{"role":"assistant","content":"tw');
    const context = new LinearContext(path);
    const report = await context.restore();
    expect(report).to.include({ messages: 1, recoveredTornLine: true });
    expect(report.tornLineSavedTo).to.match(/torn\.jsonl\.torn-\d{4}-\d\d-\d\dT[\d-]+Z$/);
    expect(await readFile(report.tornLineSavedTo!, 'utf8')).to.equal('{"role":"assistant","content":"tw');
    await context.append(assistant('two'));
    await context.close();
    expect(await readFile(path, 'utf8')).to.equal('{"role":"user","content":"one"}\n{"role":"assistant","content":"two"}\n');
  });

  it('keeps two torn tails cut in the same millisecond in two files', async () => {
    const path = join(dir, 'torn.jsonl');
    const saved: string[] = [];
    const clock = sinon.useFakeTimers({ now: Date.UTC(2030, 0, 2, 3, 4, 5, 6), toFake: ['Date'] });
    try {
      for (const tail of ['{"role":"user","con', '{"role":"assist']) {
        await writeFile(path, `{"role":"user","content":"one"}\n${tail}`);
        const context = new LinearContext(path);
        saved.push((await context.restore()).tornLineSavedTo!);
        await context.close(); // releases the session's lock, for the next round's context
      }
    } finally {
      clock.restore();
    }
    expect(saved).to.deep.equal([`${path}.torn-2030-01-02T03-04-05-006Z`, `${path}.torn-2030-01-02T03-04-05-006Z-2`]);
    expect(await Promise.all(saved.map((file) => readFile(file, 'utf8')))).to.deep.equal(['{"role":"user","con', '{"role":"assist']);
  });

  it('recovers a torn first record (a crash during the very first append), in either writer\'s spacing', async () => {
    for (const torn of ['{"role":"user","content":"hel', '{"role": "user", "content": "hel']) {
      const path = join(dir, 'first.jsonl');
      await writeFile(path, torn);
      const context = new LinearContext(path);
      const report = await context.restore();
      await context.close();
      expect(report).to.include({ messages: 0, recoveredTornLine: true });
      expect(await readFile(path, 'utf8')).to.equal('');
      expect(await readFile(report.tornLineSavedTo!, 'utf8')).to.equal(torn);
    }
  });

  it('refuses a file that is not a history (text, random bytes), leaving it byte for byte unchanged', async () => {
    const random = Buffer.alloc(4096);
    let seed = 42;
    for (let i = 0; i < random.length; i++) random[i] = (seed = (seed * 1103515245 + 12345) >>> 0) >>> 24;
    const cases: [string, Buffer][] = [
      ['one line of text, no newline', Buffer.from('remember to buy milk')],
      ['text lines', Buffer.from('first line of notes\nsecond line of notes\n')],
      ['random bytes', random],
      ['random bytes without a newline', Buffer.from(random.filter((byte) => byte !== 0x0a))],
      ['invalid UTF-8 in the first line', Buffer.from([0x7b, 0xff, 0xfe, 0x0a])],
      ['a JSON value that is not a record', Buffer.from('42')],
      ['a half JSON object of another kind', Buffer.from('{"name":"kosong","vers')],
    ];
    for (const [label, bytes] of cases) {
      const path = join(dir, 'notes.txt');
      await writeFile(path, bytes);
      const context = new LinearContext(path);
      const caught = await context.restore().catch((e: unknown) => e);
      expect(ContextCorruptedError.isInstance(caught), `${label}: ${String(caught)}`).to.equal(true);
      expect(caught, label).to.include({ path, line: 1 });
      if (label !== 'a JSON value that is not a record') expect(caught, label).to.include({ notAHistoryFile: true });
      expect((caught as Error).message, label).to.contain(path);
      expect((await readFile(path)).equals(bytes), `${label}: the file is unchanged`).to.equal(true);
      expect(context.history, label).to.deep.equal([]);
      expect(await readdir(dir), `${label}: nothing written beside it`).to.deep.equal(['notes.txt']);
    }
  });

  it('checks the whole file before changing anything: a bad line 2 and a torn tail leave the file as it was', async () => {
    const path = join(dir, 'session.jsonl');
    const corrupted = '{"role":"user","content":"one"}\n{"role":"assistant","con\n{"role":"user","content":"three"}\n{"role":"assistant","content":"fo';
    await writeFile(path, corrupted);
    const context = new LinearContext(path);
    const caught = await context.restore().catch((e: unknown) => e);
    expect(ContextCorruptedError.isInstance(caught)).to.equal(true);
    expect(caught).to.include({ line: 2, notAHistoryFile: false });
    expect(await readFile(path, 'utf8')).to.equal(corrupted);
    expect(context.history).to.deep.equal([]);
    expect(await readdir(dir)).to.deep.equal(['session.jsonl']);
  });

  it('a missing directory or a path that is not a regular file is a ContextFileError, before anything is written', async () => {
    const inMissing = join(dir, 'no-such-dir', 'session.jsonl');
    for (const path of [inMissing, join(dir, 'file.txt', 'session.jsonl')]) {
      await writeFile(join(dir, 'file.txt'), 'x');
      const caught = await new LinearContext(path).restore().catch((e: unknown) => e);
      expect(ContextFileError.isInstance(caught), String(caught)).to.equal(true);
      expect(caught).to.include({ path, problem: 'missing-directory' });
      expect((caught as Error).message).to.contain(path);
      // Without a restore, the first append says the same.
      const appended = await new LinearContext(path).append(user('x')).catch((e: unknown) => e);
      expect(appended).to.include({ problem: 'missing-directory' });
    }
    const fifo = join(dir, 'pipe');
    execFileSync('mkfifo', [fifo]);
    for (const path of [dir, fifo, '/dev/null']) {
      const caught = await new LinearContext(path).restore().catch((e: unknown) => e);
      expect(ContextFileError.isInstance(caught), `${path}: ${String(caught)}`).to.equal(true);
      expect(caught).to.include({ problem: 'not-a-file' });
    }
  });

  it('refuses to append once the file was renamed, deleted or replaced: the moved file and the history stay as they were', async () => {
    for (const move of ['rename', 'delete', 'replace'] as const) {
      const path = join(dir, `${move}.jsonl`);
      const context = new LinearContext(path);
      await context.append(user('one'));
      const moved = join(dir, `${move}-moved.jsonl`);
      if (move === 'rename') await rename(path, moved);
      else if (move === 'delete') await unlink(path);
      else {
        await writeFile(moved, '{"role":"user","content":"someone else"}\n');
        await rename(moved, path);
      }
      const caught = await context.append(assistant('two')).catch((e: unknown) => e);
      expect(ContextFileError.isInstance(caught), `${move}: ${String(caught)}`).to.equal(true);
      expect(caught).to.include({ path, problem: 'file-replaced' });
      expect(context.history, move).to.deep.equal([user('one')]);
      if (move === 'rename') expect(await readFile(moved, 'utf8')).to.equal('{"role":"user","content":"one"}\n');
      if (move === 'replace') expect(await readFile(path, 'utf8')).to.equal('{"role":"user","content":"someone else"}\n');
      if (move === 'delete') expect(await readdir(dir)).not.to.include(`${move}.jsonl`);
      await context.close();
    }
  });

  it('refuses to append to a file something else wrote to, also after a close and between restore and the first append', async () => {
    const path = join(dir, 'shared.jsonl');
    const context = new LinearContext(path);
    await context.append(user('one'));
    await appendFile(path, '{"role":"user","content":"from another process"}\n');
    expect(await context.append(assistant('two')).catch((e: unknown) => e)).to.include({ problem: 'file-changed' });
    await context.close();

    const restored = new LinearContext(path);
    await restored.restore();
    await restored.append(assistant('two'));
    await restored.close();
    await appendFile(path, '{"role":"user","content":"again"}\n');
    expect(await restored.append(user('three')).catch((e: unknown) => e)).to.include({ problem: 'file-changed' });
    await restored.close(); // the failed append had taken the session's lock again

    const late = new LinearContext(path);
    await late.restore();
    await appendFile(path, '{"role":"user","content":"in between"}\n');
    expect(await late.append(user('four')).catch((e: unknown) => e)).to.include({ problem: 'file-changed' });
    expect(late.history.map((m) => (m.content[0] as { text: string }).text)).to.deep.equal(['one', 'from another process', 'two', 'again']);
  });

  it('a write cut short (the file size limit, for real) is undone: the file restores to the state before the failed append', async function () {
    this.timeout(20_000);
    const path = join(dir, 'limited.jsonl');
    // The child runs with RLIMIT_FSIZE: the kernel writes part of the append that crosses the limit
    // (a short write), then refuses the rest with EFBIG, as a full disk does with ENOSPC.
    const script = `
      const { LinearContext, ContextFileError } = await import(${JSON.stringify(import.meta.resolve('@kosong/core'))});
      const { statSync } = await import('node:fs');
      const context = new LinearContext(${JSON.stringify(path)});
      const size = () => { try { return statSync(${JSON.stringify(path)}).size; } catch { return 0; } };
      const failures = [];
      for (let i = 0; i < 40 && failures.length < 3; i++) {
        const before = size();
        const text = 'm' + i + ':' + 'x'.repeat(2500 + i * 37);
        try {
          await context.append({ role: 'user', content: [{ type: 'text', text }] }, { role: 'assistant', content: [{ type: 'text', text: 'ok ' + i }] });
        } catch (error) {
          failures.push({ isInstance: ContextFileError.isInstance(error), problem: error.problem, message: error.message, before, after: size() });
        }
      }
      process.stdout.write(JSON.stringify({ failures, inMemory: context.history.length }));
    `;
    const out = execFileSync('sh', ['-c', 'ulimit -f 64 && exec "$0" "$@"', process.execPath, '--input-type=module', '-e', script], { encoding: 'utf8' });
    const { failures, inMemory } = JSON.parse(out) as { failures: { isInstance: boolean; problem: string; message: string; before: number; after: number }[]; inMemory: number };
    expect(failures, 'the limit was reached').to.have.length(3);
    for (const failure of failures) {
      expect(failure).to.include({ isInstance: true, problem: 'write-failed' });
      expect(failure.message).to.contain('the file is as it was before this append');
      expect(failure.after, 'cut back to the last good offset').to.equal(failure.before);
    }
    const restored = new LinearContext(path);
    expect(await restored.restore()).to.deep.equal({ messages: inMemory, recoveredTornLine: false });
    expect(inMemory).to.be.greaterThan(0);
    // Without the limit, appending goes on.
    await restored.append(user('after the limit'));
    await restored.close();
    const again = new LinearContext(path);
    expect((await again.restore()).messages).to.equal(inMemory + 1);
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
      await again.close(); // the next round's writer takes the session's lock
      // A kill rarely tears a line (the kernel finishes a write() in progress); a power cut can. So the
      // last round also adds a torn tail by hand, and the restore below must cut it off.
      if (round === 2) await appendFile(path, '{"role":"user","con');
    }
    const last = new LinearContext(path);
    expect((await last.restore()).recoveredTornLine).to.equal(true);
  });
});
