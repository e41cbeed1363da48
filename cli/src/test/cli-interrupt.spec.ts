/**
 * Ctrl-C (SIGINT to the CLI process) while a tool runs: the step is aborted, its tool processes are
 * stopped, nothing of the step is saved; one-shot exits 130, the REPL goes on to the next line, and
 * a second Ctrl-C exits 130.
 */
import { expect } from 'chai';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CUT_OFF_REPLY, CUT_OFF_TURN_LINE, INTERRUPTED_REPLY } from '../cli-session.js';
import { isAlive, killLeftovers, makeWorkspace, readJsonl, runCli, startCli, toolCallLine, waitForFileLine, waitUntilGone, type Workspace } from './cli-harness.js';

const INTERRUPTED_LINE = '⏹ interrupted: the step was aborted (Ctrl-C again to exit)';
/** `run` exits after the turn: it does not offer a second Ctrl-C. */
const RUN_INTERRUPTED_LINE = '⏹ interrupted: the step was aborted';
/** What the next turn says before it completes the step Ctrl-C cut off (from the session's call ledger). */
const COMPLETING_LINE = 'the last step was cut off while 1 tool call ran: completing it first (a call that may have run is not run again unless its tool only reads; the model is told)';
/** The start of the result the model gets for a call Ctrl-C cut off, when that step is completed. */
const CUT_OFF_RESULT = 'Tool call was interrupted: it started, but its outcome was never recorded';

/** The messages of a session file (the call ledger's records, `_call_started` …, left out). */
function messagesOf(file: string): Array<Record<string, unknown>> {
  return readJsonl(file).filter((line) => !String(line['role']).startsWith('_'));
}
/** Well under the 30 s the tool would take. */
const PROMPT_EXIT_MS = 5_000;

describe('kosong CLI: Ctrl-C during a tool call', function () {
  this.timeout(20_000);
  let ws: Workspace;
  let pidFile: string;
  let toolPids: number[];

  beforeEach(() => {
    ws = makeWorkspace();
    pidFile = join(ws.base, 'sleep.pid');
    toolPids = [];
  });
  afterEach(() => {
    killLeftovers();
    for (const pid of toolPids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone, as it should be
      }
    }
    ws.remove();
  });

  /** Waits until the tool's `sleep` has written its pid, and remembers it for cleanup. */
  async function sleepPid(file = pidFile): Promise<number> {
    const pid = Number(await waitForFileLine(file));
    expect(pid).to.be.a('number').above(1);
    toolPids.push(pid);
    expect(isAlive(pid), 'the tool process runs').to.equal(true);
    return pid;
  }

  const cases = [
    // `exec`: the sleep replaces bash, so it is the CLI's own child.
    { what: 'a simple command', command: `echo $$ > ${pidFileName()}; exec sleep 30` },
    // The sleep is a grandchild of the CLI (bash waits for the subshell): stopping bash alone leaves it running.
    { what: 'a command that starts a process of its own', command: `(echo $BASHPID > ${pidFileName()}; exec sleep 30); touch ../finished` },
  ];
  for (const { what, command } of cases) {
    it(`one-shot, ${what}: exits 130 promptly, the tool process is gone, the session holds the user message and the call's start, not the step`, async () => {
      const script = toolCallLine('c1', 'bash', { command });
      const cli = startCli(['--provider', 'echo', '--allow-bash', '--session', 'session.jsonl', 'run', script], ws.cwd);
      await cli.waitForStdout(/^→ #1 bash\(/m);
      const pid = await sleepPid();

      const interruptedAt = Date.now();
      cli.interrupt();
      const exit = await cli.waitForExit(PROMPT_EXIT_MS + 5_000);
      const elapsed = Date.now() - interruptedAt;

      expect(exit.code, exit.stderr).to.equal(130);
      expect(elapsed, 'exit after Ctrl-C (ms)').to.be.below(PROMPT_EXIT_MS);
      expect(await waitUntilGone(pid), `the tool's sleep (pid ${pid}) was stopped`).to.equal(true);
      expect(exit.stdout).to.include('\n✗ #1 bash: Tool `bash` was cancelled: Interrupted by the user\n');
      expect(exit.stdout.trimEnd().split('\n').at(-1)).to.equal(RUN_INTERRUPTED_LINE);
      expect(existsSync(join(ws.base, 'finished')), 'the rest of the command never ran').to.equal(false);
      expect(exit.stdout).not.to.match(/^— /m);
      const file = join(ws.cwd, 'session.jsonl');
      expect(messagesOf(file)).to.deep.equal([{ role: 'user', content: script }]);
      expect(readJsonl(file).map((line) => line['role']), 'the call ledger recorded that the call started').to.deep.equal(['user', '_call_started']);

      // The next run completes the step first: the command is not run again, the model is told it was cut off.
      const next = await runCli(['--provider', 'echo', '--session', 'session.jsonl', 'run', 'text: go on'], ws.cwd);
      expect(next.code, next.stderr).to.equal(0);
      expect(next.stdout).to.include(`${COMPLETING_LINE}\n`);
      expect(next.stdout).to.include(`✗ #1 bash: ${CUT_OFF_RESULT}`);
      expect(existsSync(join(ws.base, 'finished')), 'the command did not run again').to.equal(false);
      expect(messagesOf(file).map((m) => m['role'])).to.deep.equal(['user', 'assistant', 'tool', 'user', 'assistant']);
    });
  }

  // Processes that leave the command's process group and session: `setsid` straight away, and a
  // daemon (a new session whose parent exits at once). They hold the output pipes.
  const ESCAPING = `setsid sleep 300 & echo $! > ../orphan.pid; (setsid sh -c 'sleep 301 & echo $! > ../daemon.pid' &); sleep 30`;

  it('one-shot: Ctrl-C stops processes that left the process group (setsid, a daemon), and run exits 130 promptly', async () => {
    const cli = startCli(['--provider', 'echo', '--allow-bash', 'run', toolCallLine('c1', 'bash', { command: ESCAPING })], ws.cwd);
    await cli.waitForStdout(/^→ #1 bash\(/m);
    const orphan = await sleepPid(join(ws.base, 'orphan.pid'));
    const daemon = await sleepPid(join(ws.base, 'daemon.pid'));

    const interruptedAt = Date.now();
    cli.interrupt();
    const exit = await cli.waitForExit(PROMPT_EXIT_MS + 5_000);
    expect(exit.code, exit.stderr).to.equal(130);
    expect(Date.now() - interruptedAt, 'exit after Ctrl-C (ms)').to.be.below(PROMPT_EXIT_MS);
    expect(await waitUntilGone(orphan, 3_000), `the setsid sleep (pid ${orphan}) was stopped`).to.equal(true);
    expect(await waitUntilGone(daemon, 3_000), `the daemon's sleep (pid ${daemon}) was stopped`).to.equal(true);
  });

  it('REPL: after Ctrl-C stopped a command whose processes escaped, the next turn runs and nothing of it is left', async () => {
    const cli = startCli(['--provider', 'echo', '--allow-bash'], ws.cwd);
    cli.send(toolCallLine('c1', 'bash', { command: ESCAPING }));
    await cli.waitForStdout(/^→ #1 bash\(/m);
    const orphan = await sleepPid(join(ws.base, 'orphan.pid'));
    const daemon = await sleepPid(join(ws.base, 'daemon.pid'));
    cli.interrupt();
    await cli.waitForStdout(INTERRUPTED_LINE);
    expect(await waitUntilGone(orphan, 3_000), `the setsid sleep (pid ${orphan}) was stopped`).to.equal(true);
    expect(await waitUntilGone(daemon, 3_000), `the daemon's sleep (pid ${daemon}) was stopped`).to.equal(true);
    cli.send('text: next');
    // The turn completes the step Ctrl-C cut off first (the model is told), then answers.
    await cli.waitForStdout(/^next\n— 2 steps/m);
    expect(cli.stdout).to.include(`${COMPLETING_LINE}\n`);
    expect(cli.stdout).to.include(`✗ #1 bash: ${CUT_OFF_RESULT}`);
    cli.endInput();
    expect((await cli.waitForExit()).code).to.equal(0);
  });

  it('REPL: Ctrl-C interrupts the turn and the session goes on with the next line; Ctrl-C when idle exits 130', async () => {
    const script = toolCallLine('c1', 'bash', { command: `echo $$ > ${pidFileName()}; exec sleep 30` });
    const cli = startCli(['--provider', 'echo', '--allow-bash', '--session', 'repl.jsonl'], ws.cwd);
    cli.send(script);
    await cli.waitForStdout(/^→ #1 bash\(/m);
    const pid = await sleepPid();

    cli.interrupt();
    await cli.waitForStdout(INTERRUPTED_LINE);
    expect(await waitUntilGone(pid), `the tool's sleep (pid ${pid}) was stopped`).to.equal(true);
    expect(cli.child.exitCode, 'still running after the first Ctrl-C').to.equal(null);

    // The next line is a new turn: it first completes the step Ctrl-C cut off (the model is told the
    // call was interrupted; it is not run again), then answers.
    cli.send('text: still listening');
    await cli.waitForStdout(/^still listening\n— 2 steps · 0 input tokens · 0 output tokens\n/m);
    expect(cli.stdout).to.include(`${COMPLETING_LINE}\n`);
    const saved = messagesOf(join(ws.cwd, 'repl.jsonl'));
    expect(saved.map((m) => m['role'])).to.deep.equal(['user', 'assistant', 'tool', 'user', 'assistant']);
    expect(saved[0]).to.deep.equal({ role: 'user', content: script });
    expect(String(saved[2]!['content'])).to.include(CUT_OFF_RESULT);
    expect(saved.slice(3)).to.deep.equal([
      { role: 'user', content: 'text: still listening' },
      { role: 'assistant', content: 'still listening' },
    ]);

    // Idle now (waiting for input): Ctrl-C exits.
    cli.interrupt();
    const exit = await cli.waitForExit(PROMPT_EXIT_MS);
    expect(exit.code).to.equal(130);
  });

  it('REPL: a second Ctrl-C soon after the first exits 130, even while the next turn runs, leaving no tool process behind', async () => {
    // Two lines, each running a tool: the first Ctrl-C interrupts the first turn, the REPL starts the
    // second, and a second Ctrl-C within the double-press window exits instead of interrupting it.
    const line = (n: number): string => toolCallLine(`c${n}`, 'bash', { command: `echo $$ > ../sleep-${n}.pid; exec sleep 30` });
    const cli = startCli(['--provider', 'echo', '--allow-bash', '--session', 'repl.jsonl'], ws.cwd);
    cli.send(line(1));
    cli.send(line(2));
    cli.send('text: never reached');
    await cli.waitForStdout(/^→ #1 bash\(/m);
    const first = await sleepPid(join(ws.base, 'sleep-1.pid'));

    cli.interrupt();
    await cli.waitForStdout(INTERRUPTED_LINE);
    const second = await sleepPid(join(ws.base, 'sleep-2.pid'));
    // The second turn completed the cut-off step first (c1, #1 again), then ran its own call (#2).
    expect(cli.stdout.match(/^→ #1 bash\(/gm)).to.have.length(2);
    expect(cli.stdout, 'the second turn is running its tool').to.match(/^→ #2 bash\(/m);

    const interruptedAt = Date.now();
    cli.interrupt();
    const exit = await cli.waitForExit(PROMPT_EXIT_MS + 5_000);
    expect(exit.code).to.equal(130);
    expect(Date.now() - interruptedAt, 'exit after the second Ctrl-C (ms)').to.be.below(PROMPT_EXIT_MS);
    expect(exit.stdout.split(INTERRUPTED_LINE), 'the second Ctrl-C exits, it does not interrupt again').to.have.length(2);
    expect(exit.stdout).not.to.include('never reached');
    expect(await waitUntilGone(first), `the first tool's sleep (pid ${first}) was stopped`).to.equal(true);
    expect(await waitUntilGone(second), `the second tool's sleep (pid ${second}) was stopped`).to.equal(true);
    const saved = messagesOf(join(ws.cwd, 'repl.jsonl'));
    expect(saved.map((m) => m['role']), 'the first step completed, the second cut off').to.deep.equal(['user', 'assistant', 'tool', 'user']);
    expect(saved[3]).to.deep.equal({ role: 'user', content: line(2) });
  });
});

describe('kosong CLI: a turn cut off before any tool started', function () {
  this.timeout(30_000);
  let ws: Workspace;

  beforeEach(() => (ws = makeWorkspace()));
  afterEach(() => {
    killLeftovers();
    ws.remove();
  });

  it('one-shot Ctrl-C while the model streams: the session records the reply as interrupted, and the next run follows it', async () => {
    // The demo streams its first step slowly (thinking, then text), with its tool calls at the end.
    const cli = startCli(['--session', 's.jsonl', 'run', 'Show me around'], ws.cwd);
    await cli.waitForStdout(/^Let me look/m);
    cli.interrupt();
    const exit = await cli.waitForExit();
    expect(exit.code, exit.stderr).to.equal(130);
    expect(exit.stdout).not.to.match(/^→ /m);
    const file = join(ws.cwd, 's.jsonl');
    const saved = messagesOf(file);
    expect(saved.map((m) => m['role']), 'the user message has its (interrupted) reply').to.deep.equal(['user', 'assistant']);
    expect(saved[1]).to.include({ partial: true });
    expect(saved[1]!['content']).to.be.a('string').that.matches(/^Let me look/).and.satisfies((text: string) => text.endsWith(`\n\n${INTERRUPTED_REPLY}`));
    expect(saved[1]).not.to.have.property('tool_calls');

    const next = await runCli(['--provider', 'echo', '--session', 's.jsonl', 'run', 'text: go on'], ws.cwd);
    expect(next.code, next.stderr).to.equal(0);
    expect(next.stdout).not.to.include('cut off');
    expect(messagesOf(file).map((m) => m['role'])).to.deep.equal(['user', 'assistant', 'user', 'assistant']);
  });

  it('a session left without a reply (the process was killed while the model streamed): the next turn records that first, then answers', async () => {
    const file = join(ws.cwd, 's.jsonl');
    writeFileSync(file, `${JSON.stringify({ role: 'user', content: 'hello?' })}\n`);
    const next = await runCli(['--provider', 'echo', '--session', 's.jsonl', 'run', 'text: here'], ws.cwd);
    expect(next.code, next.stderr).to.equal(0);
    expect(next.stdout.split('\n').slice(0, 2)).to.deep.equal(['resumed 1 messages from s.jsonl', CUT_OFF_TURN_LINE]);
    const saved = messagesOf(file);
    expect(saved.map((m) => m['role'])).to.deep.equal(['user', 'assistant', 'user', 'assistant']);
    expect(saved[1]).to.deep.equal({ role: 'assistant', content: CUT_OFF_REPLY, partial: true });
  });

  it('a turn that failed before any tool started has its failure recorded as the reply: the next message follows it', async () => {
    const result = await runCli(['--provider', 'echo', '--session', 's.jsonl'], ws.cwd, { input: 'banana: no such line\ntext: fine\n' });
    expect(result.code, result.stderr).to.equal(0);
    const saved = messagesOf(join(ws.cwd, 's.jsonl'));
    expect(saved.map((m) => m['role'])).to.deep.equal(['user', 'assistant', 'user', 'assistant']);
    expect(saved[1]).to.include({ partial: true });
    expect(saved[1]!['content']).to.match(/^\[No reply: the turn failed \(EchoScriptError: Unknown echo DSL kind 'banana'.*\)\.\]$/);
    expect(saved[3]).to.deep.equal({ role: 'assistant', content: 'fine' });
  });

  it('REPL: Ctrl-C mid-reply, then the next message: the conversation alternates, one reply per message', async () => {
    const cli = startCli(['--session', 'repl.jsonl'], ws.cwd);
    cli.send('Show me around');
    await cli.waitForStdout(/^Let me look/m);
    cli.interrupt();
    await cli.waitForStdout(INTERRUPTED_LINE);
    cli.send('and now?');
    await cli.waitForStdout(/^— 1 step /m);
    cli.endInput();
    expect((await cli.waitForExit()).code).to.equal(0);
    const saved = messagesOf(join(ws.cwd, 'repl.jsonl'));
    expect(saved.map((m) => m['role'])).to.deep.equal(['user', 'assistant', 'user', 'assistant']);
    expect(saved[1]).to.include({ partial: true });
    expect(saved[2]).to.deep.equal({ role: 'user', content: 'and now?' });
  });
});

/** The pid file, relative to the CLI's working directory (`base/work`). */
function pidFileName(): string {
  return '../sleep.pid';
}
