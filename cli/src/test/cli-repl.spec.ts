/**
 * The interactive session (`kosong` with no command) reading lines from a pipe: one turn per line,
 * the conversation carried from turn to turn, `/exit`, and the exit at end of input.
 */
import { expect } from 'chai';
import { join } from 'node:path';
import { jsonEvents, killLeftovers, makeWorkspace, readJsonl, runCli, type CliExit, type Workspace } from './cli-harness.js';

const ECHO_USAGE_LINE = '— 1 step · 0 input tokens · 0 output tokens';

describe('kosong CLI: REPL over stdin (no TTY)', function () {
  this.timeout(60_000);
  let ws: Workspace;
  const runs: Record<string, CliExit> = {};

  before(async () => {
    ws = makeWorkspace();
    // Independent sessions, run together to keep the suite fast.
    const echo = (input: string, ...flags: string[]): Promise<CliExit> => runCli(['--provider', 'echo', ...flags], ws.cwd, { input, timeoutMs: 40_000 });
    const names = ['twoLines', 'noFinalNewline', '/exit', '/quit', 'failed', 'json', 'continued', 'help'] as const;
    const results = await Promise.all([
      echo('text: first answer\n\n   \ntext: second answer\n', '--session', 'repl.jsonl'),
      echo('text: only line'),
      echo('text: before\n/exit\ntext: after\n'),
      echo('text: before\n/quit\ntext: after\n'),
      echo('text: fine\nbanana: split\n'),
      echo('text: one\ntext: two\n', '--json'),
      echo('text: a \\\ntext: b \\\n\\\ntext: c\ntext: d\n', '--session', 'continued.jsonl'),
      echo('/help\n/nope\n/etc/passwd is a file\n'),
    ]);
    names.forEach((name, index) => (runs[name] = results[index]!));
  });
  after(() => {
    killLeftovers();
    ws.remove();
  });

  it('runs one turn per line, skipping blank lines, and exits 0 at end of input', () => {
    const result = runs.twoLines!;
    expect(result.stderr).to.equal('');
    expect(result.code).to.equal(0);
    expect(result.stdout.split('\n')).to.deep.equal(['first answer', ECHO_USAGE_LINE, 'second answer', ECHO_USAGE_LINE, '']);
    // No prompt is drawn when stdin is not a terminal.
    expect(result.stdout).not.to.include('›');
    // Both turns belong to one conversation.
    expect(readJsonl(join(ws.cwd, 'repl.jsonl'))).to.deep.equal([
      { role: 'user', content: 'text: first answer' },
      { role: 'assistant', content: 'first answer' },
      { role: 'user', content: 'text: second answer' },
      { role: 'assistant', content: 'second answer' },
    ]);
  });

  it('runs the last line even without a final newline', () => {
    const result = runs.noFinalNewline!;
    expect(result.code).to.equal(0);
    expect(result.stdout.split('\n')).to.deep.equal(['only line', ECHO_USAGE_LINE, '']);
  });

  for (const command of ['/exit', '/quit']) {
    it(`${command} ends the session early with exit code 0`, () => {
      const result = runs[command]!;
      expect(result.stderr).to.equal('');
      expect(result.code).to.equal(0);
      expect(result.stdout.split('\n')).to.deep.equal(['before', ECHO_USAGE_LINE, '']);
    });
  }

  it('exits 1 when the last turn failed, having shown the error', () => {
    const result = runs.failed!;
    expect(result.code).to.equal(1);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines.slice(0, 2)).to.deep.equal(['fine', ECHO_USAGE_LINE]);
    expect(lines.at(-1)).to.match(/^✗ .*Unknown echo DSL kind 'banana'/);
  });

  it('a line ending with \\ continues on the next one: the lines are one message', () => {
    const result = runs.continued!;
    expect(result.stderr).to.equal('');
    expect(result.code).to.equal(0);
    expect(result.stdout.split('\n')).to.deep.equal(['abc', ECHO_USAGE_LINE, 'd', ECHO_USAGE_LINE, '']);
    expect(readJsonl(join(ws.cwd, 'continued.jsonl')).filter((m) => m.role === 'user')).to.deep.equal([
      { role: 'user', content: 'text: a \ntext: b \n\ntext: c' },
      { role: 'user', content: 'text: d' },
    ]);
  });

  it('/help lists the commands, an unknown /command says so, and a message that only starts with / is a message', () => {
    const result = runs.help!;
    expect(result.stderr).to.equal('');
    const lines = result.stdout.split('\n');
    expect(lines).to.include('  /exit, /quit   end the session (so does Ctrl-D on an empty line)');
    expect(lines).to.include('unknown command /nope; /help lists the commands');
    // The third line went to the model: the echo provider could not read it as a script.
    expect(lines.at(-2)).to.match(/^✗ EchoScriptError: Invalid echo DSL at line 1: '\/etc\/passwd is a file'/);
    expect(result.code).to.equal(1);
  });

  it('with --json, prints the events of each turn', () => {
    const result = runs.json!;
    expect(result.code).to.equal(0);
    const events = jsonEvents(result.stdout);
    expect(events.filter((e) => e.type === 'turn_start').map((e) => e.input)).to.deep.equal(['text: one', 'text: two']);
    const ends = events.filter((e) => e.type === 'turn_end');
    expect(ends.map((e) => [e.steps, e.stopReason])).to.deep.equal([
      [1, 'no_tool_calls'],
      [1, 'no_tool_calls'],
    ]);
    expect(ends.map((e) => (e.message as { content: Array<{ text: string }> }).content.map((p) => p.text).join(''))).to.deep.equal(['one', 'two']);
  });
});
