/**
 * `write_file`, `edit_file`, `grep` and `glob` as the model calls them (the built-in toolset's
 * `handle`): what they do, and every way they refuse — outside the working directory, through a
 * symbolic link, binary files, huge arguments, ambiguous edits — leaving files byte for byte.
 */
import { toolCall, type ToolResult } from '@kosong/core';
import { expect } from 'chai';
import { chmodSync, mkdirSync, readFileSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { builtinToolset } from '../tools/builtin-tools.js';
import { MAX_EDIT_BYTES, editPreview } from '../tools/file-edits.js';
import { makeWorkspace, type Workspace } from './cli-harness.js';

describe('kosong CLI: write_file, edit_file, grep and glob', function () {
  this.timeout(60_000);
  let ws: Workspace;
  let n = 0;

  beforeEach(() => (ws = makeWorkspace()));
  afterEach(() => ws.remove());

  /** A call's result, its output as text. */
  async function call(name: string, args: object, allowEdits = true): Promise<ToolResult['returnValue'] & { readonly output: string }> {
    const toolset = builtinToolset({ cwd: ws.cwd, allowEdits });
    const made = toolCall(`c${++n}`, name, JSON.stringify(args));
    const { returnValue } = await toolset.handle(made, { signal: new AbortController().signal, toolCall: made, stepId: 'edits' });
    return { ...returnValue, output: typeof returnValue.output === 'string' ? returnValue.output : JSON.stringify(returnValue.output) };
  }

  const read = (path: string): string => readFileSync(join(ws.cwd, path), 'utf8');
  const strayTemps = (): string[] => readdirSync(ws.cwd, { recursive: true }).map(String).filter((name) => name.includes('.kosong-'));

  it('write_file creates a file (and its directories) or replaces one whole, keeping its permissions', async () => {
    const created = await call('write_file', { path: 'docs/new/a.md', content: '# A\n\nhello\n' });
    expect(created).to.include({ isError: false });
    expect(created.output).to.match(/^Created docs\/new\/a\.md \(4 lines\)/);
    expect(read('docs/new/a.md')).to.equal('# A\n\nhello\n');
    chmodSync(join(ws.cwd, 'notes.txt'), 0o600);
    expect(await call('write_file', { path: 'notes.txt', content: 'new' })).to.include({ isError: false });
    expect(read('notes.txt')).to.equal('new');
    expect(statSync(join(ws.cwd, 'notes.txt')).mode & 0o777).to.equal(0o600);
    expect(strayTemps()).to.deep.equal([]);
  });

  it('edit_file replaces one exact occurrence, or all with replace_all, and shows the diff', async () => {
    writeFileSync(join(ws.cwd, 'app.ts'), 'const a = 1;\nconst b = 1;\nexport { a, b };\n');
    const one = await call('edit_file', { path: 'app.ts', old_string: 'const a = 1;', new_string: 'const a = 2;' });
    expect(one).to.include({ isError: false });
    expect(one.output).to.include('Edited app.ts: 1 replacement').and.include('-const a = 1;').and.include('+const a = 2;');
    expect(read('app.ts')).to.equal('const a = 2;\nconst b = 1;\nexport { a, b };\n');
    const all = await call('edit_file', { path: 'app.ts', old_string: ' = ', new_string: ' := ', replace_all: true });
    expect(all.output).to.include('2 replacements');
    expect(read('app.ts')).to.equal('const a := 2;\nconst b := 1;\nexport { a, b };\n');
  });

  it('edit_file refuses, and leaves the file byte for byte: not found, not unique, empty or equal strings, binary, not UTF-8, too large', async () => {
    const text = 'x = 1\nx = 1\n';
    writeFileSync(join(ws.cwd, 'dup.txt'), text);
    const cases: [object, RegExp][] = [
      [{ path: 'dup.txt', old_string: 'y = 2', new_string: 'z' }, /was not found in dup\.txt/],
      [{ path: 'dup.txt', old_string: 'x = 1', new_string: 'x = 2' }, /occurs 2 times in dup\.txt: give more surrounding text.*or set replace_all/],
      [{ path: 'dup.txt', old_string: '', new_string: 'x' }, /old_string is empty/],
      [{ path: 'dup.txt', old_string: 'x = 1', new_string: 'x = 1' }, /the same: nothing would change/],
      [{ path: 'dup.txt', old_string: 'x', new_string: 'y'.repeat(MAX_EDIT_BYTES + 1) }, /new_string is over 10485760 bytes/],
      [{ path: 'dup.txt', old_string: 'x', new_string: 'y', replace_all: 'yes' }, /replace_all.*expected boolean/],
      [{ path: 'missing.txt', old_string: 'x', new_string: 'y' }, /"missing\.txt" does not exist/],
    ];
    for (const [args, expected] of cases) {
      const result = await call('edit_file', args);
      expect(result.isError, JSON.stringify(args).slice(0, 80)).to.equal(true);
      expect(result.message, JSON.stringify(args).slice(0, 80)).to.match(expected);
      expect(read('dup.txt')).to.equal(text);
    }
    const binary = Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x00, 0x00, 0x78]);
    writeFileSync(join(ws.cwd, 'archive.zip'), binary);
    expect((await call('edit_file', { path: 'archive.zip', old_string: 'x', new_string: 'y' })).message).to.match(/binary file/);
    expect(readFileSync(join(ws.cwd, 'archive.zip'))).to.deep.equal(binary);
    const latin1 = Buffer.from('caf\xe9 x\n', 'latin1');
    writeFileSync(join(ws.cwd, 'latin1.txt'), latin1);
    expect((await call('edit_file', { path: 'latin1.txt', old_string: 'x', new_string: 'y' })).message).to.match(/not UTF-8 text/);
    expect(readFileSync(join(ws.cwd, 'latin1.txt'))).to.deep.equal(latin1);
    writeFileSync(join(ws.cwd, 'big.txt'), Buffer.alloc(MAX_EDIT_BYTES + 1, 'a'));
    expect((await call('edit_file', { path: 'big.txt', old_string: 'a', new_string: 'b' })).message).to.match(/too large to edit/);
    expect(strayTemps()).to.deep.equal([]);
  });

  it('neither tool writes outside the working directory or through a symbolic link', async () => {
    const outside = readFileSync(ws.outsideFile, 'utf8');
    symlinkSync('notes.txt', join(ws.cwd, 'link-in.txt')); // a link to a file inside: still not written through
    const attempts: [string, object, RegExp][] = [
      ['write_file', { path: '../outside.txt', content: 'pwned' }, /outside the working directory/],
      ['write_file', { path: '/etc/kosong-test', content: 'pwned' }, /outside the working directory/],
      ['write_file', { path: 'link-out.txt', content: 'pwned' }, /outside the working directory|symbolic link/],
      ['write_file', { path: 'link-base/outside.txt', content: 'pwned' }, /outside the working directory/],
      ['write_file', { path: 'link-in.txt', content: 'pwned' }, /symbolic link/],
      ['edit_file', { path: 'link-out.txt', old_string: 'TOP', new_string: 'pwned' }, /outside the working directory|symbolic link/],
      ['edit_file', { path: 'link-in.txt', old_string: 'first', new_string: 'pwned' }, /symbolic link/],
      ['edit_file', { path: '../outside.txt', old_string: 'TOP', new_string: 'pwned' }, /outside the working directory/],
    ];
    for (const [name, args, expected] of attempts) {
      const result = await call(name, args);
      expect(result.isError, `${name} ${JSON.stringify(args)}`).to.equal(true);
      expect(result.message, `${name} ${JSON.stringify(args)}`).to.match(expected);
    }
    expect(readFileSync(ws.outsideFile, 'utf8')).to.equal(outside);
    expect(read('notes.txt')).to.equal(ws.notes);
  });

  it('each write needs approval unless edits are allowed; the approval shows the diff the call would make', async () => {
    const gated = builtinToolset({ cwd: ws.cwd });
    const edit = toolCall('e1', 'edit_file', JSON.stringify({ path: 'notes.txt', old_string: 'second line', new_string: 'SECOND LINE' }));
    const context = { signal: new AbortController().signal, toolCall: edit, stepId: 's' };
    expect(await gated.needsApproval!(edit, context)).to.equal(true);
    expect(await gated.needsApproval!(toolCall('g', 'grep', '{"pattern":"x"}'), context)).to.equal(false);
    expect(await builtinToolset({ cwd: ws.cwd, allowEdits: true }).needsApproval!(edit, context)).to.equal(false);
    const preview = await editPreview(ws.cwd, edit);
    expect(preview).to.include('--- a/notes.txt').and.include('+++ b/notes.txt').and.include('-second line of notes').and.include('+SECOND LINE of notes');
    expect(read('notes.txt'), 'a preview changes nothing').to.equal(ws.notes);
    const write = toolCall('w1', 'write_file', JSON.stringify({ path: 'fresh.txt', content: 'one\ntwo\n' }));
    expect(await editPreview(ws.cwd, write)).to.include('+one').and.include('+two');
    expect(await editPreview(ws.cwd, toolCall('x', 'edit_file', JSON.stringify({ path: 'notes.txt', old_string: 'absent', new_string: 'y' })))).to.match(/the call will fail: .*not found/);
    expect(await editPreview(ws.cwd, toolCall('r', 'read_file', '{"path":"notes.txt"}'))).to.equal(undefined);
    const tools = gated.tools.map((t) => t.name);
    expect(tools).to.include.members(['write_file', 'edit_file', 'grep', 'glob']);
    expect(gated.replayPolicy!(toolCall('g', 'grep', '{}'))).to.equal('safe');
    expect(gated.replayPolicy!(toolCall('g', 'glob', '{}'))).to.equal('safe');
    expect(gated.replayPolicy!(edit)).to.equal('never');
    expect(gated.replayPolicy!(write)).to.equal('never');
  });

  it('grep finds lines by regular expression, honours .gitignore (nested ones too) and globs, and never reads through links', async () => {
    mkdirSync(join(ws.cwd, 'build'), { recursive: true });
    mkdirSync(join(ws.cwd, 'src', 'gen'), { recursive: true });
    writeFileSync(join(ws.cwd, '.gitignore'), 'build/\n*.log\n');
    writeFileSync(join(ws.cwd, 'src', '.gitignore'), 'gen/\n');
    writeFileSync(join(ws.cwd, 'build', 'out.ts'), 'export const answer = 42;\n');
    writeFileSync(join(ws.cwd, 'src', 'gen', 'types.ts'), 'export const answer = 42;\n');
    writeFileSync(join(ws.cwd, 'debug.log'), 'answer = 42\n');
    writeFileSync(join(ws.cwd, 'src', 'util.js'), 'const Answer = 41;\nconst answer = 42;\n');
    writeFileSync(join(ws.cwd, 'image.bin'), Buffer.from([0, 1, 2, 0x61, 0x6e, 0x73, 0x77, 0x65, 0x72]));
    const all = await call('grep', { pattern: 'answer = 4\\d' });
    expect(all).to.include({ isError: false });
    expect(all.output.split('\n')).to.deep.equal(['src/index.ts:1: export const answer = 42;', 'src/util.js:2: const answer = 42;']);
    const insensitive = await call('grep', { pattern: 'answer = 41', ignore_case: true, glob: '*.js' });
    expect(insensitive.output).to.equal('src/util.js:1: const Answer = 41;');
    expect((await call('grep', { pattern: 'TOP SECRET' })).output, 'link-out.txt and link-base are links').to.equal('No matches.');
    expect((await call('grep', { pattern: 'second', path: 'notes.txt' })).output).to.equal('notes.txt:2: second line of notes');
    expect((await call('grep', { pattern: '(' })).message).to.match(/not a valid regular expression/);
    expect((await call('grep', { pattern: 'x', path: '..' })).message).to.match(/outside the working directory/);
    expect((await call('grep', { pattern: 'x', path: 'nowhere' })).message).to.match(/does not exist/);
    expect((await call('grep', { pattern: 'x', extra: 1 })).isError).to.equal(true);
  });

  it('glob lists matching files, .gitignore honoured, and bounds its output', async () => {
    writeFileSync(join(ws.cwd, '.gitignore'), 'ignored/\n');
    mkdirSync(join(ws.cwd, 'ignored'), { recursive: true });
    writeFileSync(join(ws.cwd, 'ignored', 'x.ts'), '');
    mkdirSync(join(ws.cwd, 'many'), { recursive: true });
    for (let i = 0; i < 1_100; i++) writeFileSync(join(ws.cwd, 'many', `f${String(i).padStart(4, '0')}.txt`), '');
    const ts = await call('glob', { pattern: '**/*.ts' });
    expect(ts.output).to.equal('src/index.ts');
    const many = await call('glob', { pattern: '*.txt', path: 'many' });
    const lines = many.output.split('\n');
    expect(lines).to.have.length(1_001);
    expect(lines[0]).to.equal('many/f0000.txt');
    expect(lines.at(-1)).to.equal('(100 more not listed)');
    expect((await call('glob', { pattern: '*', path: '../' })).message).to.match(/outside the working directory/);
  });

  it('grep searches a tree of 10,000 files (its time is a bench figure, not this test\'s)', async () => {
    for (let d = 0; d < 100; d++) {
      mkdirSync(join(ws.cwd, 'tree', `d${d}`), { recursive: true });
      for (let f = 0; f < 100; f++) writeFileSync(join(ws.cwd, 'tree', `d${d}`, `f${f}.txt`), `line one\nline ${d}-${f} two\nline three\n`);
    }
    const result = await call('grep', { pattern: '^line 42-7 ', path: 'tree' });
    expect(result.output).to.equal('tree/d42/f7.txt:2: line 42-7 two');
    expect(result).to.include({ isError: false });
    expect((await call('grep', { pattern: 'three' })).output.split('\n').at(-1)).to.equal('(9500 more matching lines not shown)');
  });
});
