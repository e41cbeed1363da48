import { ContextFileError, LinearContext, textPart } from '@kosong/core';
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { chmod, link, mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const message = { role: 'user' as const, content: [textPart('hello')] };

/** The error a promise rejects with (or `undefined`). */
async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => undefined,
    (error: unknown) => error,
  );
}

describe('session files are never written through a link, nor someone else\'s', () => {
  let dir: string;
  let victim: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kosong-safety-'));
    await mkdir(join(dir, 'victim'));
    victim = join(dir, 'victim', 'authorized_keys');
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('a dangling symbolic link: the target is not created, by a restore or an append', async () => {
    const path = join(dir, 's.jsonl');
    await symlink(victim, path);
    const restored = await failure(new LinearContext(path).restore());
    expect(restored).to.satisfy(ContextFileError.isInstance).and.include({ problem: 'unsafe-file' });
    expect((restored as Error).message).to.match(/symbolic link/);
    const appended = await failure(new LinearContext(path, { lock: false }).append(message));
    expect(appended).to.satisfy(ContextFileError.isInstance).and.include({ problem: 'unsafe-file' });
    expect(await readdir(join(dir, 'victim'))).to.deep.equal([]);
  });

  it('a link to an empty file is not appended to', async () => {
    await writeFile(victim, '');
    const path = join(dir, 's.jsonl');
    await symlink(victim, path);
    const context = new LinearContext(path);
    expect(await failure(context.append(message))).to.include({ problem: 'unsafe-file' });
    await context.close();
    expect(await readFile(victim, 'utf8')).to.equal('');
  });

  it('a link to a history with a torn tail: the target is not truncated, nor is its tail copied', async () => {
    const torn = '{"role":"user","content":"one"}\n{"role":"assistant","content":"tw';
    await writeFile(victim, torn);
    const path = join(dir, 's.jsonl');
    await symlink(victim, path);
    expect(await failure(new LinearContext(path).restore())).to.include({ problem: 'unsafe-file' });
    expect(await readFile(victim, 'utf8')).to.equal(torn);
    expect((await readdir(dir)).filter((name) => name.includes('.torn-'))).to.deep.equal([]);
  });

  it('a hard link to another file is refused too', async () => {
    await writeFile(victim, '{"role":"user","content":"one"}\n');
    const path = join(dir, 's.jsonl');
    await link(victim, path);
    expect(await failure(new LinearContext(path).restore())).to.include({ problem: 'unsafe-file' });
    expect(await failure(new LinearContext(path, { lock: false }).append(message))).to.include({ problem: 'unsafe-file' });
    expect(await readFile(victim, 'utf8')).to.equal('{"role":"user","content":"one"}\n');
  });

  it('a file of another user is refused (run as root: the file is given to nobody)', async function () {
    if (process.getuid?.() !== 0) this.skip(); // only root can give a file away; the check itself runs for every user
    const path = join(dir, 's.jsonl');
    await writeFile(path, '{"role":"user","content":"one"}\n');
    const { chown } = await import('node:fs/promises');
    await chown(path, 65534, 65534);
    expect(await failure(new LinearContext(path).restore())).to.include({ problem: 'unsafe-file' });
    expect((await stat(path)).size).to.equal(32);
  });

  it('a directory it may not enter: a typed no-access error, not a raw EACCES (run as another user when root)', async () => {
    const locked = join(dir, 'ro');
    await mkdir(locked);
    await chmod(locked, 0o500);
    const path = join(locked, 's.jsonl');
    // Root may write anywhere: the check runs in a child started as nobody, for whom the test folder is closed (0700).
    const script = `
      const { LinearContext } = await import(${JSON.stringify(import.meta.resolve('@kosong/core'))});
      const error = await new LinearContext(${JSON.stringify(path)}).append({ role: 'user', content: [{ type: 'text', text: 'x' }] }).then(() => undefined, (e) => e);
      process.stdout.write(JSON.stringify({ name: error?.name, problem: error?.problem }));
    `;
    const asRoot = process.getuid?.() === 0;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', ...(asRoot ? { uid: 65534, gid: 65534 } : {}) });
    expect(JSON.parse(out)).to.deep.equal({ name: 'ContextFileError', problem: 'no-access' });
  });

  it('a torn tail that cannot be kept (the file size limit, as a full disk): a typed error, no empty copy left, the file as it was', () => {
    const path = join(dir, 'torn.jsonl');
    const torn = '{"role":"user","content":"one"}\n{"role":"assistant","content":"' + 'x'.repeat(80_000);
    // The child runs with RLIMIT_FSIZE of 64 KiB: the file exists already; its torn tail (80 KB) cannot be copied.
    const script = `
      const { writeFileSync } = await import('node:fs');
      const { LinearContext } = await import(${JSON.stringify(import.meta.resolve('@kosong/core'))});
      const error = await new LinearContext(${JSON.stringify(path)}).restore().then(() => undefined, (e) => e);
      process.stdout.write(JSON.stringify({ name: error?.name, problem: error?.problem, message: error?.message }));
    `;
    writeFileSync(path, torn);
    const out = execFileSync('sh', ['-c', 'ulimit -f 64 && exec "$0" "$@"', process.execPath, '--input-type=module', '-e', script], { encoding: 'utf8' });
    const result = JSON.parse(out) as { name: string; problem: string; message: string };
    expect(result).to.include({ name: 'ContextFileError', problem: 'write-failed' });
    expect(result.message).to.match(/could not keep the torn last line beside the file/);
    expect(readdirSync(dir).filter((name) => name.includes('.torn-'))).to.deep.equal([]);
    expect(readFileSync(path, 'utf8')).to.equal(torn);
  });
});
