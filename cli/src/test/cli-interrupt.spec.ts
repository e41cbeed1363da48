/**
 * Ctrl-C (SIGINT to the CLI process) while a tool runs: the step is aborted, its tool processes are
 * stopped, nothing of the step is saved; one-shot exits 130, the REPL goes on to the next line, and
 * a second Ctrl-C exits 130.
 */
import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { isAlive, killLeftovers, makeWorkspace, readJsonl, startCli, toolCallLine, waitForFileLine, waitUntilGone, type Workspace } from './cli-harness.js';

const INTERRUPTED_LINE = '⏹ interrupted: the step was aborted and not saved (Ctrl-C again to exit)';
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
    it(`one-shot, ${what}: exits 130 promptly, the tool process is gone, the session holds only the user message`, async () => {
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
      expect(exit.stdout.trimEnd().split('\n').at(-1)).to.equal(INTERRUPTED_LINE);
      expect(existsSync(join(ws.base, 'finished')), 'the rest of the command never ran').to.equal(false);
      expect(exit.stdout).not.to.match(/^— /m);
      expect(readJsonl(join(ws.cwd, 'session.jsonl'))).to.deep.equal([{ role: 'user', content: script }]);
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
    await cli.waitForStdout(/^next\n— 1 step/m);
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

    // The next line is a new turn, with the interrupted user message still in the conversation.
    cli.send('text: still listening');
    await cli.waitForStdout(/^still listening\n— 1 step · 0 input tokens · 0 output tokens\n/m);
    expect(readJsonl(join(ws.cwd, 'repl.jsonl'))).to.deep.equal([
      { role: 'user', content: script },
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
    expect(cli.stdout.match(/^→ #1 bash\(/gm), 'the second turn is running its tool').to.have.length(2);

    const interruptedAt = Date.now();
    cli.interrupt();
    const exit = await cli.waitForExit(PROMPT_EXIT_MS + 5_000);
    expect(exit.code).to.equal(130);
    expect(Date.now() - interruptedAt, 'exit after the second Ctrl-C (ms)').to.be.below(PROMPT_EXIT_MS);
    expect(exit.stdout.split(INTERRUPTED_LINE), 'the second Ctrl-C exits, it does not interrupt again').to.have.length(2);
    expect(exit.stdout).not.to.include('never reached');
    expect(await waitUntilGone(first), `the first tool's sleep (pid ${first}) was stopped`).to.equal(true);
    expect(await waitUntilGone(second), `the second tool's sleep (pid ${second}) was stopped`).to.equal(true);
    expect(readJsonl(join(ws.cwd, 'repl.jsonl'))).to.deep.equal([
      { role: 'user', content: line(1) },
      { role: 'user', content: line(2) },
    ]);
  });
});

/** The pid file, relative to the CLI's working directory (`base/work`). */
function pidFileName(): string {
  return '../sleep.pid';
}
