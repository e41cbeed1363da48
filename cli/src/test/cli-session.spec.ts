/**
 * `--session FILE`: the conversation is saved as Python-kosong-compatible JSONL, resumed on the next
 * run, and a file corrupted in the middle is refused with a message naming the line.
 */
import { expect } from 'chai';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { killLeftovers, makeWorkspace, readJsonl, runCli, type Workspace } from './cli-harness.js';

describe('kosong CLI: --session', function () {
  this.timeout(20_000);
  let ws: Workspace;
  let file: string;

  beforeEach(() => {
    ws = makeWorkspace();
    file = join(ws.cwd, 'session.jsonl');
  });
  afterEach(() => {
    killLeftovers();
    ws.remove();
  });

  it('saves the turn as JSONL, resumes it on the next run and appends to it', async () => {
    const first = await runCli(['--session', 'session.jsonl', 'run', 'Show me around'], ws.cwd);
    expect(first.stderr).to.equal('');
    expect(first.code).to.equal(0);
    expect(first.stdout).not.to.include('resumed');

    const records = readJsonl(file);
    // Each tool call's start and outcome are call-ledger records (roles starting with `_`, which other readers skip).
    expect(records.filter((m) => m.role === '_call_started')).to.have.length(4);
    const saved = records.filter((m) => !String(m.role).startsWith('_'));
    expect(saved.map((m) => m.role)).to.deep.equal(['user', 'assistant', 'tool', 'tool', 'tool', 'assistant', 'tool', 'assistant']);
    // The wire format of the Python kosong: snake_case keys, string content where it is plain text.
    expect(saved[0]).to.deep.equal({ role: 'user', content: 'Show me around' });
    const firstAssistant = saved[1] as { tool_calls: Array<{ type: string; id: string; function: { name: string; arguments: string } }> };
    expect(firstAssistant.tool_calls.map((c) => c.id)).to.deep.equal(['call_list', 'call_read', 'call_escape']);
    expect(firstAssistant.tool_calls[1]).to.deep.equal({ type: 'function', id: 'call_read', function: { name: 'read_file', arguments: '{"path":"package.json"}' } });
    expect(saved.slice(2, 5).map((m) => m.tool_call_id)).to.deep.equal(['call_list', 'call_read', 'call_escape']);
    expect(saved[3]!.content).to.equal(readFileSync(join(ws.cwd, 'package.json'), 'utf8'));
    expect(saved[4]!.content).to.be.a('string').that.includes('outside the working directory');
    expect((saved[5] as { tool_calls: Array<{ id: string }> }).tool_calls.map((c) => c.id)).to.deep.equal(['call_calc']);
    expect(saved[6]).to.deep.equal({ role: 'tool', content: '20800', tool_call_id: 'call_calc' });
    expect(saved[7]).to.have.property('content').that.is.a('string').and.match(/^Done\./);
    expect(saved[7]).not.to.have.property('tool_calls');
    const before = readFileSync(file, 'utf8');

    const second = await runCli(['--provider', 'echo', '--session', 'session.jsonl', 'run', 'text: welcome back'], ws.cwd);
    expect(second.stderr).to.equal('');
    expect(second.code).to.equal(0);
    const lines = second.stdout.split('\n');
    expect(lines[0]).to.equal('resumed 8 messages from session.jsonl');
    expect(lines).to.include('welcome back');

    const after = readFileSync(file, 'utf8');
    expect(after.startsWith(before), 'the earlier lines are kept as they were').to.equal(true);
    expect(readJsonl(file).slice(records.length)).to.deep.equal([
      { role: 'user', content: 'text: welcome back' },
      { role: 'assistant', content: 'welcome back' },
    ]);
  });

  it('refuses a session path that is a symbolic link (dangling, or to an empty file): exit 2, one line, the target neither created nor written', async () => {
    mkdirSync(join(ws.cwd, 'victim'));
    const victim = join(ws.cwd, 'victim', 'authorized_keys');
    symlinkSync(victim, file);
    const dangling = await runCli(['--provider', 'echo', '--session', 'session.jsonl', 'run', 'text: hi'], ws.cwd);
    expect(dangling.code).to.equal(2);
    expect(dangling.stdout).to.equal('');
    expect(dangling.stderr).to.match(/^kosong: .*session\.jsonl: the path is a symbolic link/);
    expect(dangling.stderr.trimEnd().split('\n')).to.have.length(1);
    expect(existsSync(victim), 'the target was not created').to.equal(false);
    writeFileSync(victim, '');
    const empty = await runCli(['--provider', 'echo', '--session', 'session.jsonl', 'run', 'text: hi'], ws.cwd);
    expect(empty.code).to.equal(2);
    expect(readFileSync(victim, 'utf8'), 'nothing appended to the target').to.equal('');
  });

  it('refuses a file corrupted in the middle: exit 2, a message naming the line, the file untouched', async () => {
    const good = [
      { role: 'user', content: 'text: one' },
      { role: 'assistant', content: 'one' },
      { role: 'user', content: 'text: two' },
      { role: 'assistant', content: 'two' },
    ].map((m) => JSON.stringify(m));
    const corrupted = [good[0], good[1], '{"role": "user", "content": "tex', good[3]].join('\n') + '\n';
    writeFileSync(file, corrupted);

    const result = await runCli(['--provider', 'echo', '--session', 'session.jsonl', 'run', 'text: three'], ws.cwd);
    expect(result.code).to.equal(2);
    expect(result.stdout).to.equal('');
    expect(result.stderr).to.match(/^kosong: /);
    expect(result.stderr).to.include('line 3');
    expect(result.stderr).to.include('session.jsonl');
    expect(result.stderr.trimEnd().split('\n'), 'one line, no stack trace').to.have.length(1);
    expect(readFileSync(file, 'utf8')).to.equal(corrupted);
  });

  it('recovers from a torn last line (a crash mid-append), says so, and goes on', async () => {
    const complete = `${JSON.stringify({ role: 'user', content: 'text: one' })}\n${JSON.stringify({ role: 'assistant', content: 'one' })}\n`;
    writeFileSync(file, `${complete}{"role":"user","conte`);

    const result = await runCli(['--provider', 'echo', '--session', 'session.jsonl', 'run', 'text: two'], ws.cwd);
    expect(result.stderr).to.equal('');
    expect(result.code).to.equal(0);
    expect(result.stdout).to.include('resumed 2 messages from session.jsonl');
    expect(result.stdout).to.match(/cut short \(a crash\?\); it was moved to session\.jsonl\.torn-\S+Z\n/);
    const torn = readdirSync(ws.cwd).filter((name) => name.startsWith('session.jsonl.torn-'));
    expect(torn).to.have.length(1);
    expect(readFileSync(join(ws.cwd, torn[0]!), 'utf8'), 'what was cut is kept').to.equal('{"role":"user","conte');
    expect(readJsonl(file)).to.deep.equal([
      { role: 'user', content: 'text: one' },
      { role: 'assistant', content: 'one' },
      { role: 'user', content: 'text: two' },
      { role: 'assistant', content: 'two' },
    ]);
  });

  it('refuses a file that is not a session (one line of text, random bytes): exit 2 naming the file, the file byte for byte unchanged', async () => {
    const random = Buffer.alloc(2048);
    let seed = 7;
    for (let i = 0; i < random.length; i++) random[i] = (seed = (seed * 1103515245 + 12345) >>> 0) >>> 24;
    for (const [name, bytes] of [
      ['notes.txt', Buffer.from('remember to buy milk')],
      ['blob.bin', random],
    ] as const) {
      writeFileSync(join(ws.cwd, name), bytes);
      const before = readdirSync(ws.cwd).sort();
      const result = await runCli(['--provider', 'echo', '-s', name, 'run', 'text: hello'], ws.cwd);
      expect(result.code, name).to.equal(2);
      expect(result.stdout, name).to.equal('');
      expect(result.stderr, name).to.match(new RegExp(`^kosong: ContextCorruptedError: ${name.replace('.', '\\.')} is not a history file`));
      expect(result.stderr.trimEnd().split('\n'), 'one line, no stack trace').to.have.length(1);
      expect(readFileSync(join(ws.cwd, name)).equals(bytes), `${name} is unchanged`).to.equal(true);
      expect(readdirSync(ws.cwd).sort(), 'nothing written beside it').to.deep.equal(before);
    }
  });

  it('a bad line 2 and a torn last line: exit 2 naming line 2, and the file is not cut first', async () => {
    const corrupted = `${JSON.stringify({ role: 'user', content: 'text: one' })}\n{"role":"assistant","con\n${JSON.stringify({ role: 'user', content: 'text: two' })}\n{"role":"assistant","conte`;
    writeFileSync(file, corrupted);
    const result = await runCli(['--provider', 'echo', '--session', 'session.jsonl', 'run', 'text: three'], ws.cwd);
    expect(result.code).to.equal(2);
    expect(result.stderr).to.match(/^kosong: ContextCorruptedError: session\.jsonl: line 2 /);
    expect(readFileSync(file, 'utf8')).to.equal(corrupted);
    expect(readdirSync(ws.cwd).filter((name) => name.includes('.torn-'))).to.deep.equal([]);
  });

  it('a session file in a directory that does not exist: exit 2 before the turn starts', async () => {
    const result = await runCli(['--provider', 'echo', '--session', 'missing/session.jsonl', 'run', 'text: hello'], ws.cwd);
    expect(result.code).to.equal(2);
    expect(result.stdout, 'no turn was run').to.equal('');
    expect(result.stderr).to.equal('kosong: ContextFileError: missing/session.jsonl: the directory missing does not exist, so the file cannot be created\n');
    expect(existsSync(join(ws.cwd, 'missing'))).to.equal(false);
  });
});
