/**
 * The built-in tools as the model sees them through the CLI (`--provider echo`: the prompt is the
 * script the model plays): file tools confined to the working directory, `bash` run without asking
 * only with `--allow-bash` (see cli-approval.spec.ts for the questions).
 */
import { expect } from 'chai';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { jsonEvents, killLeftovers, makeWorkspace, runCli, startCli, toolCallLine, type CliExit, type Workspace } from './cli-harness.js';

interface ReturnValue {
  readonly isError: boolean;
  readonly output: string;
  readonly message: string;
}

/** The exit code of a turn that stopped at `--max-steps` (these runs stop after the step of the calls). */
const STOPPED_AT_STEP_LIMIT = 3;

/** The tool results of a `--json` run, by call id; and the turn must have stopped at the step limit. */
function resultsById(run: CliExit): Map<string, ReturnValue> {
  expect(run.stderr).to.equal('');
  expect(run.code).to.equal(STOPPED_AT_STEP_LIMIT);
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
  this.timeout(60_000);
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
    expect(run.code).to.equal(STOPPED_AT_STEP_LIMIT);
    expect(run.stdout).to.include('\n✗ #1 read_file: Path "../outside.txt" is outside the working directory; only paths inside it are allowed.\n');
    expect(run.stdout).to.include('\n✓ #2 read_file: Read notes.txt (3 lines)\n');
    expect(run.stdout).not.to.include(ws.secret);
  });

  it('--provider echo plays a tool round trip: the step after the results plays the script after ---', async () => {
    const script = ['text: Reading.', toolCallLine('r1', 'read_file', { path: 'notes.txt' }), '---', 'text: The notes have two lines.'].join('\n');
    const run = await runCli(['--provider', 'echo', 'run', script], ws.cwd);
    expect(run.stderr).to.equal('');
    expect(run.code, run.stdout).to.equal(0);
    const lines = run.stdout.split('\n');
    expect(lines.slice(0, 3)).to.deep.equal(['Reading.', '→ #1 read_file({"path":"notes.txt"})', '✓ #1 read_file: Read notes.txt (3 lines)']);
    expect(lines.slice(3)).to.deep.equal(['The notes have two lines.', '— 2 steps · 0 input tokens · 0 output tokens', '']);
  });

  it('names the call of every result when several run at once', async () => {
    writeFileSync(join(ws.cwd, 'second.txt'), 'one line');
    const script = [
      toolCallLine('a', 'read_file', { path: 'notes.txt' }),
      toolCallLine('b', 'read_file', { path: 'missing.txt' }),
      toolCallLine('c', 'read_file', { path: 'second.txt' }),
      toolCallLine('d', 'list_directory', { path: 'src' }),
    ].join('\n');
    const run = await runCli(['--provider', 'echo', '--max-steps', '1', 'run', script], ws.cwd);
    expect(run.code, run.stderr).to.equal(STOPPED_AT_STEP_LIMIT);
    const results = run.stdout.split('\n').filter((line) => /^[✓✗] /.test(line));
    expect(results).to.have.members([
      '✓ #1 read_file: Read notes.txt (3 lines)',
      '✗ #2 read_file: "missing.txt" does not exist',
      '✓ #3 read_file: Read second.txt (1 line)',
      '✓ #4 list_directory: 1 entry in src',
    ]);
    for (const n of [1, 2, 3, 4]) expect(run.stdout).to.match(new RegExp(`^→ #${n} (read_file|list_directory)\\(`, 'm'));
  });

  it('refuses binary files and files too large with errors that say why, sizes with their unit', async () => {
    writeFileSync(join(ws.cwd, 'image.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00]));
    writeFileSync(join(ws.cwd, 'latin1.txt'), Buffer.from('caf\xe9\n', 'latin1'));
    writeFileSync(join(ws.cwd, 'big.txt'), 'x'.repeat(300_000));
    const script = ['image.png', 'latin1.txt', 'big.txt', 'src'].map((path, i) => toolCallLine(`f${i}`, 'read_file', { path })).join('\n');
    const results = resultsById(await runCli(['--provider', 'echo', '--max-steps', '1', '--json', 'run', script], ws.cwd));
    expect(results.get('f0')).to.include({ isError: true, message: '"image.png" is a binary file (a NUL byte at byte 8); read_file reads UTF-8 text files only' });
    expect(results.get('f1')).to.include({ isError: true, message: '"latin1.txt" is not UTF-8 text (a binary file?); read_file reads UTF-8 text files only' });
    expect(results.get('f2')).to.include({ isError: true, message: '"big.txt" is 293 KiB (300,000 bytes); read_file reads files up to 256 KiB' });
    expect(results.get('f3')).to.include({ isError: true, message: '"src" is not a file' });
  });

  it('shows the start of the output of bash results, failed ones too', async () => {
    const script = [toolCallLine('s', 'bash', { command: 'seq 1 12' }), toolCallLine('f', 'bash', { command: 'echo oops >&2; exit 3' })].join('\n');
    const run = await runCli(['--provider', 'echo', '--allow-bash', '--max-steps', '1', 'run', script], ws.cwd);
    expect(run.code, run.stderr).to.equal(STOPPED_AT_STEP_LIMIT);
    const lines = run.stdout.split('\n');
    const seq = lines.indexOf('✓ #1 bash: $ seq 1 12');
    expect(seq, run.stdout).to.be.at.least(0);
    expect(lines.slice(seq + 1, seq + 7)).to.deep.equal(['  │ 1', '  │ 2', '  │ 3', '  │ 4', '  │ 5', '  │ … 7 more lines']);
    const failed = lines.indexOf('✗ #2 bash: bash exited with code 3');
    expect(failed, run.stdout).to.be.at.least(0);
    expect(lines[failed + 1]).to.equal('  │ oops');
  });

  it('bash keeps the start and end of endless output, and the CLI stays small while `yes` runs', async function () {
    this.timeout(60_000);
    const seconds = 4;
    const cli = startCli(['--provider', 'echo', '--allow-bash', '--max-steps', '1', '--json', 'run', toolCallLine('y', 'bash', { command: `timeout ${seconds} yes` })], ws.cwd);
    let maxRssMb = 0;
    const sampler = setInterval(() => (maxRssMb = Math.max(maxRssMb, rssMb(cli.pid))), 50);
    const run = await cli.waitForExit(40_000).finally(() => clearInterval(sampler));
    expect(run.code, run.stderr).to.equal(STOPPED_AT_STEP_LIMIT);
    const result = resultsById(run).get('y')!;
    expect(result).to.include({ isError: true, message: 'bash exited with code 124' });
    expect(result.output.startsWith('y\ny\ny\n')).to.equal(true);
    expect(result.output.endsWith('y\n')).to.equal(true);
    const marker = /\n\[… [\d.]+ [KMG]iB \(([\d,]+) bytes\) of output cut …\]\n/.exec(result.output);
    expect(marker, 'a line saying how much was cut').to.not.equal(null);
    expect(Number(marker![1]!.replace(/,/g, '')), 'bytes cut').to.be.above(10_000_000);
    expect(result.output.length, 'kept: 32 KiB of each end and the marker').to.be.below(66_000);
    expect(maxRssMb, 'peak RSS of the CLI while yes ran (MB)').to.be.above(0).and.below(250);
  });

  it('refuses bash without --allow-bash when nobody can be asked (no terminal)', async () => {
    const marker = join(ws.base, 'bash-ran');
    const script = toolCallLine('b1', 'bash', { command: `touch ${marker}` });
    const [run, plain] = await Promise.all([
      runCli(['--provider', 'echo', '--max-steps', '1', '--json', 'run', script], ws.cwd),
      runCli(['--provider', 'echo', '--max-steps', '1', 'run', script], ws.cwd),
    ]);
    const result = resultsById(run).get('b1')!;
    expect(result.isError).to.equal(true);
    expect(result.message).to.match(/^The tool call was denied: .*--allow-bash/);
    expect(plain.stdout).to.include('\n✗ #1 bash: The tool call was denied: ');
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

/** The resident set size of a process in MB (0 once it is gone). */
function rssMb(pid: number): number {
  try {
    const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}
