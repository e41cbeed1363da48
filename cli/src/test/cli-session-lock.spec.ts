/**
 * One process per session file, and a process killed mid-call (issue 20), with real processes:
 * a second `kosong -s file` is refused at start while the first runs (exit 2, one line naming the
 * session and the other process, nothing run); after a SIGKILL while an approved bash command runs,
 * the next `kosong -s file run …` takes the lock over at once, completes the cut-off step without
 * running the command again (counted by the command's own marker file) and tells the model the call
 * was interrupted, while a read-only built-in of the same step runs again.
 */
import { expect } from 'chai';
import { existsSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { jsonEvents, killLeftovers, makeWorkspace, readJsonl, runCli, startCli, toolCallLine, waitForFileLine, waitUntilGone, type Workspace } from './cli-harness.js';
import { HAS_SCRIPT, KEY, PtyCli, killPtyLeftovers } from './pty-harness.js';

const INTERRUPTED = 'Tool call was interrupted: it started, but its outcome was never recorded';

/** The lines of a file (none when it does not exist). */
function linesOf(file: string): string[] {
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
}

/** The pid the session's lock file names. */
function lockHolder(session: string): number {
  return (JSON.parse(readFileSync(`${session}.lock`, 'utf8')) as { pid: number }).pid;
}

describe('kosong CLI: one process per session, and a process killed mid-call', function () {
  this.timeout(60_000);
  let ws: Workspace;
  let session: string;
  let marker: string;
  /** Tool processes (the `sleep` a command became): a SIGKILLed CLI leaves them; killed after each test. */
  const toolPids: number[] = [];

  /** A bash command that appends a line to the marker, writes its pid to `pidFile` and sleeps (as `sleep`, by exec). */
  const appendAndSleep = (pidFile: string): string => `echo ran >> marker.txt; echo $$ > ${pidFile}; exec sleep 30`;

  beforeEach(() => {
    ws = makeWorkspace();
    session = join(ws.cwd, 'session.jsonl');
    marker = join(ws.cwd, 'marker.txt');
  });
  afterEach(() => {
    killPtyLeftovers();
    killLeftovers();
    for (const pid of toolPids.splice(0)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
    ws.remove();
  });

  /** Waits for the command's pid file, and remembers the pid for cleanup. */
  async function toolPid(pidFile: string): Promise<number> {
    const pid = Number(await waitForFileLine(join(ws.cwd, pidFile)));
    toolPids.push(pid);
    return pid;
  }

  describe('a second process on the same session', () => {
    it('is refused at start while the first is in a turn: exit 2, one line naming the session and the other process, nothing run, the file untouched', async () => {
      const first = startCli(['--provider', 'echo', '--allow-bash', '-s', 'session.jsonl', 'run', toolCallLine('b1', 'bash', { command: appendAndSleep('first.pid') })], ws.cwd);
      await toolPid('first.pid');
      const before = readFileSync(session, 'utf8');

      const attempts = [
        ['--provider', 'echo', '--allow-bash', '-s', 'session.jsonl', 'run', toolCallLine('b2', 'bash', { command: 'echo second >> second.txt' })],
        ['--provider', 'echo', '--allow-bash', '--json', '--session', 'session.jsonl', 'run', 'text: hello'],
        ['--provider', 'echo', '-s', 'session.jsonl', 'chat'],
      ];
      for (const args of attempts) {
        const second = await runCli(args, ws.cwd, { input: toolCallLine('b3', 'bash', { command: 'echo chat >> second.txt' }) + '\n' });
        expect(second.code, args.join(' ')).to.equal(2);
        const since = (JSON.parse(readFileSync(`${session}.lock`, 'utf8')) as { since: string }).since;
        const message =
          `the session session.jsonl is in use by process ${first.pid} on ${hostname()} (since ${since}): ` +
          'one kosong at a time can use a session file; wait until that one ends, or pass another --session';
        // Nothing rendered, no turn started; with --json, the setup error is the one event.
        const events = args.includes('--json') ? `${JSON.stringify({ type: 'setup_failed', message, exitCode: 2 })}\n` : '';
        expect(second.stdout, 'nothing rendered, no turn started').to.equal(events);
        expect(second.stderr).to.equal(`kosong: ${message}\n`);
      }
      expect(existsSync(join(ws.cwd, 'second.txt')), 'the second processes ran nothing').to.equal(false);
      expect(readFileSync(session, 'utf8'), 'the session is as the first left it').to.equal(before);
      expect(linesOf(marker)).to.deep.equal(['ran']);

      // Once the first has ended (Ctrl-C), its lock is gone and the session can be used again.
      first.interrupt();
      expect((await first.waitForExit()).code).to.equal(130);
      expect(existsSync(`${session}.lock`), 'released on exit').to.equal(false);
      const third = await runCli(['--provider', 'echo', '-s', 'session.jsonl', 'run', 'text: now'], ws.cwd);
      expect(third.stderr).to.equal('');
      expect(third.code).to.equal(0);
      expect(third.stdout).to.include('now');
    });
  });

  describe('a process SIGKILLed while an approved bash command runs', () => {
    it('--allow-bash: the next run takes the lock over at once, does not run the command again, and the model is told it was interrupted; the read-only call that finished keeps its result', async () => {
      const script = [toolCallLine('l1', 'list_directory', { path: 'src' }), toolCallLine('b1', 'bash', { command: appendAndSleep('first.pid') })].join('\n');
      const first = startCli(['--provider', 'echo', '--allow-bash', '--json', '-s', 'session.jsonl', 'run', script], ws.cwd);
      const sleeping = await toolPid('first.pid');
      await first.waitForStdout('"toolCallId":"l1"'); // list_directory has finished too
      // Its outcome record is written right after (not synced): killed before that, it would count as interrupted and run again.
      const deadline = Date.now() + 5_000;
      while (!readFileSync(session, 'utf8').includes('"_call_settled"') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
      first.child.kill('SIGKILL');
      expect((await first.exited).signal).to.equal('SIGKILL');
      expect(lockHolder(session), 'the dead process left its lock file').to.equal(first.pid);
      expect(linesOf(marker)).to.deep.equal(['ran']);

      // --allow-bash again: even allowed, the interrupted command is not run again.
      const startedAt = Date.now();
      const next = await runCli(['--provider', 'echo', '--allow-bash', '--json', '-s', 'session.jsonl', 'run', 'text: after the crash'], ws.cwd);
      const tookMs = Date.now() - startedAt;
      expect(next.stderr).to.equal('');
      expect(next.code).to.equal(0);
      expect(tookMs, 'no wait for the dead holder (a lock of another host waits 10 s)').to.be.below(8_000);
      expect(linesOf(marker), 'the command ran once, in the killed process').to.deep.equal(['ran']);

      const events = jsonEvents(next.stdout);
      const infos = events.filter((e) => e.type === 'info').map((e) => e['message']);
      expect(infos, JSON.stringify(infos)).to.include(
        'the last step was cut off while 1 tool call ran: completing it first (a call that may have run is not run again unless its tool only reads; the model is told)',
      );
      // The listing had finished: its recorded result is kept (not run again, so no event); the bash call is interrupted.
      const results = new Map(
        events
          .filter((e) => e.type === 'tool_result')
          .map((e) => e['result'] as { toolCallId: string; returnValue: { isError: boolean; message: string; output: string } })
          .map((r) => [r.toolCallId, r.returnValue] as const),
      );
      expect([...results.keys()]).to.deep.equal(['b1']);
      expect(results.get('b1')!.isError).to.equal(true);
      expect(results.get('b1')!.message).to.include(INTERRUPTED);
      expect(events.at(-1)).to.deep.include({ type: 'turn_end', steps: 2 });

      // The session holds the completed step, then the new turn, and loads.
      const saved = readJsonl(session).filter((line) => !String(line['role']).startsWith('_'));
      expect(saved.map((m) => m['role'])).to.deep.equal(['user', 'assistant', 'tool', 'tool', 'user', 'assistant']);
      expect(saved[2]).to.deep.include({ tool_call_id: 'l1', content: 'index.ts' });
      expect(saved[3]).to.deep.include({ tool_call_id: 'b1' });
      expect(String(saved[3]!['content'])).to.include(INTERRUPTED);
      expect(existsSync(`${session}.lock`), 'released on exit').to.equal(false);
      const again = await runCli(['--provider', 'echo', '-s', 'session.jsonl', 'run', 'text: still fine'], ws.cwd);
      expect(again.code, again.stderr).to.equal(0);
      expect(again.stdout.split('\n')[0]).to.equal('resumed 6 messages from session.jsonl');
      expect(linesOf(marker)).to.deep.equal(['ran']);

      // What the killed process started is left to the user; this test stops it.
      process.kill(sleeping, 'SIGKILL');
      expect(await waitUntilGone(sleeping)).to.equal(true);
    });

    it("the command gets its call's stable key in KOSONG_IDEMPOTENCY_KEY: the step key the ledger recorded, and the call's index", async () => {
      const command = 'echo "$KOSONG_IDEMPOTENCY_KEY" >> keys.txt; echo $$ > first.pid; exec sleep 30';
      const first = startCli(['--provider', 'echo', '--allow-bash', '-s', 'session.jsonl', 'run', toolCallLine('b1', 'bash', { command })], ws.cwd);
      await toolPid('first.pid');
      first.child.kill('SIGKILL');
      await first.exited;
      const [key] = linesOf(join(ws.cwd, 'keys.txt'));
      expect(key, 'turn/step/index').to.match(/^[0-9a-f-]{36}\/1\/0$/);
      const recorded = readJsonl(session).find((line) => line['role'] === '_call_started');
      expect(recorded?.['step_key'], 'the key the ledger recorded for the step').to.equal(key!.slice(0, -'/0'.length));
    });

    it('approved at the question on a terminal (y): the next run, without --allow-bash, neither asks nor runs it again', async function () {
      if (!HAS_SCRIPT) this.skip(); // no util-linux `script` to make a pseudo-terminal with
      const command = appendAndSleep('first.pid');
      const cli = new PtyCli(['--provider', 'echo', '-s', 'session.jsonl', 'run', toolCallLine('b1', 'bash', { command })], ws.cwd);
      await cli.waitFor('[a]lways for this session');
      cli.type(`y${KEY.enter}`);
      await toolPid('first.pid');
      const holder = lockHolder(session);
      process.kill(holder, 'SIGKILL');
      await cli.waitForExit();
      expect(await waitUntilGone(holder)).to.equal(true);

      const next = await runCli(['--provider', 'echo', '--json', '-s', 'session.jsonl', 'run', 'text: after the crash'], ws.cwd);
      expect(next.code, next.stderr).to.equal(0);
      const events = jsonEvents(next.stdout);
      expect(events.map((e) => e.type), 'no approval asked for the interrupted call').not.to.include('approval_request');
      const result = events.find((e) => e.type === 'tool_result')?.['result'] as { toolCallId: string; returnValue: { message: string } };
      expect(result.toolCallId).to.equal('b1');
      expect(result.returnValue.message).to.include(INTERRUPTED);
      expect(linesOf(marker)).to.deep.equal(['ran']);
    });
  });
});
