/**
 * The built-in tools as the model sees them through the CLI (`--provider echo`: the prompt is the
 * script the model plays): file tools confined to the working directory, `bash` only with
 * `--allow-bash`.
 */
import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { jsonEvents, killLeftovers, makeWorkspace, runCli, toolCallLine, type CliExit, type Workspace } from './cli-harness.js';

interface ReturnValue {
  readonly isError: boolean;
  readonly output: string;
  readonly message: string;
}

/** The tool results of a `--json` run, by call id; and the turn must have ended normally. */
function resultsById(run: CliExit): Map<string, ReturnValue> {
  expect(run.stderr).to.equal('');
  expect(run.code).to.equal(0);
  const events = jsonEvents(run.stdout);
  expect(events.at(-1)).to.include({ type: 'turn_end', stopReason: 'max_steps' });
  return new Map(
    events
      .filter((e) => e.type === 'tool_result')
      .map((e) => {
        const result = e.result as { toolCallId: string; returnValue: ReturnValue };
        return [result.toolCallId, result.returnValue];
      }),
  );
}

describe('kosong CLI: built-in tools', function () {
  this.timeout(20_000);
  let ws: Workspace;

  beforeEach(() => {
    ws = makeWorkspace();
  });
  afterEach(() => {
    killLeftovers();
    ws.remove();
  });

  it('confine read_file and list_directory to the working directory, symbolic links included', async () => {
    const escapes: Array<[string, string, object]> = [
      ['up', 'read_file', { path: '../outside.txt' }],
      ['absolute', 'read_file', { path: ws.outsideFile }],
      ['link', 'read_file', { path: 'link-out.txt' }],
      ['dir-link', 'read_file', { path: 'link-base/outside.txt' }],
      ['sneaky', 'read_file', { path: 'src/../../outside.txt' }],
      ['missing-outside', 'read_file', { path: '../does-not-exist.txt' }],
      ['list-up', 'list_directory', { path: '..' }],
      ['list-link', 'list_directory', { path: 'link-base' }],
      ['list-root', 'list_directory', { path: '/' }],
    ];
    const allowed: Array<[string, string, object]> = [
      ['inside', 'read_file', { path: 'notes.txt' }],
      ['inside-absolute', 'read_file', { path: join(ws.cwd, 'notes.txt') }],
      ['inside-dotdot', 'read_file', { path: 'src/../notes.txt' }],
      ['list-src', 'list_directory', { path: 'src' }],
    ];
    // Two runs (at most 10 parallel calls a step: more trip Node's MaxListenersExceededWarning in the
    // step runtime, which is not what this test is about).
    const script = (calls: typeof escapes): string => calls.map(([id, name, args]) => toolCallLine(id, name, args)).join('\n');
    const runs = await Promise.all(
      [escapes, allowed].map((calls) => runCli(['--provider', 'echo', '--max-steps', '1', '--json', 'run', script(calls)], ws.cwd)),
    );
    const results = new Map([...resultsById(runs[0]!), ...resultsById(runs[1]!)]);

    expect([...results.keys()]).to.have.members([...escapes, ...allowed].map(([id]) => id));
    for (const [id, , args] of escapes) {
      const result = results.get(id)!;
      expect(result.isError, `${id}: ${JSON.stringify(args)} must be refused`).to.equal(true);
      expect(result.message, id).to.include('is outside the working directory');
    }
    expect(runs[0]!.stdout, 'nothing from outside the working directory reaches the model').not.to.include(ws.secret);
    for (const id of ['inside', 'inside-absolute', 'inside-dotdot']) expect(results.get(id), id).to.include({ isError: false, output: ws.notes });
    expect(results.get('list-src')).to.include({ isError: false, output: 'index.ts' });
  });

  it('shows refused and allowed calls in plain output too', async () => {
    const script = [toolCallLine('up', 'read_file', { path: '../outside.txt' }), toolCallLine('ok', 'read_file', { path: 'notes.txt' })].join('\n');
    const run = await runCli(['--provider', 'echo', '--max-steps', '1', 'run', script], ws.cwd);
    expect(run.code).to.equal(0);
    expect(run.stdout).to.include('\n✗ Path "../outside.txt" is outside the working directory; only paths inside it are allowed.\n');
    expect(run.stdout).to.include('\n✓ Read notes.txt (3 lines)\n');
    expect(run.stdout).not.to.include(ws.secret);
  });

  it('--provider echo plays a tool round trip: the step after the results plays the script after ---', async () => {
    const script = ['text: Reading.', toolCallLine('r1', 'read_file', { path: 'notes.txt' }), '---', 'text: The notes have two lines.'].join('\n');
    const run = await runCli(['--provider', 'echo', 'run', script], ws.cwd);
    expect(run.stderr).to.equal('');
    expect(run.code, run.stdout).to.equal(0);
    const lines = run.stdout.split('\n');
    expect(lines.slice(0, 3)).to.deep.equal(['Reading.', '→ read_file({"path":"notes.txt"})', '✓ Read notes.txt (3 lines)']);
    expect(lines.slice(3)).to.deep.equal(['The notes have two lines.', '— 2 steps · 0 input tokens · 0 output tokens', '']);
  });

  it('does not offer bash without --allow-bash', async () => {
    const marker = join(ws.base, 'bash-ran');
    const script = toolCallLine('b1', 'bash', { command: `touch ${marker}` });
    const [run, plain] = await Promise.all([
      runCli(['--provider', 'echo', '--max-steps', '1', '--json', 'run', script], ws.cwd),
      runCli(['--provider', 'echo', '--max-steps', '1', 'run', script], ws.cwd),
    ]);
    const result = resultsById(run).get('b1')!;
    expect(result.isError).to.equal(true);
    expect(result.message).to.match(/^Tool `bash` not found/);
    expect(plain.stdout).to.include('\n✗ Tool `bash` not found');
    expect(existsSync(marker), 'the command never ran').to.equal(false);
  });

  it('runs bash in the working directory with --allow-bash, reporting failures as error results', async () => {
    const script = [
      toolCallLine('ok', 'bash', { command: 'echo "answer=$((6 * 7))"; pwd' }),
      toolCallLine('fails', 'bash', { command: 'echo oops >&2; exit 3' }),
    ].join('\n');
    const run = await runCli(['--provider', 'echo', '--allow-bash', '--max-steps', '1', '--json', 'run', script], ws.cwd);
    const results = resultsById(run);
    expect(results.get('ok')).to.include({ isError: false, output: `answer=42\n${ws.cwd}\n` });
    expect(results.get('fails')).to.include({ isError: true, message: 'bash exited with code 3' });
    expect(results.get('fails')!.output).to.include('oops');
  });
});
