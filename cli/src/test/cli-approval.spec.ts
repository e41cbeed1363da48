/**
 * Approval of bash calls (issue 16): without `--allow-bash`, each bash call is put to the user on a
 * terminal (`Run bash: <command>? [y]es / [n]o / [a]lways for this session`), and refused where nobody
 * can be asked (no terminal, `--json`). The terminal cases run the CLI on a real pseudo-terminal
 * (see pty-harness.ts): the answer is typed, Ctrl-C and Ctrl-D are keys.
 */
import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { NO_ANSWER, NOBODY_TO_ASK, NOBODY_TO_ASK_NOTICE, USER_DENIED } from '../approval/bash-approval.js';
import { isAlive, jsonEvents, killLeftovers, makeWorkspace, readJsonl, runCli, toolCallLine, waitForFileLine, waitUntilGone, type Workspace } from './cli-harness.js';
import { HAS_SCRIPT, KEY, PtyCli, killPtyLeftovers, stripEscapes } from './pty-harness.js';

const ANSWERS = '? [y]es / [n]o / [a]lways for this session';
const question = (command: string): string => `Run bash: ${command}${ANSWERS}`;
const USAGE_LINE = '— 1 step · 0 input tokens · 0 output tokens · stopped at the step limit';
/** The exit code of a turn that stopped at `--max-steps` (these runs stop after the step of the bash call). */
const STOPPED_AT_STEP_LIMIT = 3;

/** The lines of the screen: what a carriage return on a line overwrote is gone (the spinner's erasures). */
function screen(cli: PtyCli): string[] {
  return cli.lines.map((line) => line.slice(line.lastIndexOf('\r') + 1));
}

/** Whether the screen shows this question (followed by the answer typed, if any). */
function asked(cli: PtyCli, command: string): boolean {
  return screen(cli).some((line) => line.startsWith(`${question(command)} `));
}

/** What the model got for each call (the tool messages of a session file), by call id. */
function toolMessages(file: string): Map<string, string> {
  const lines = readJsonl(file).filter((line) => line['role'] === 'tool');
  return new Map(lines.map((line) => [line['tool_call_id'] as string, JSON.stringify(line['content'])]));
}

describe('kosong CLI: approval of bash calls', function () {
  this.timeout(30_000);
  let ws: Workspace;
  const pids: number[] = [];

  beforeEach(() => (ws = makeWorkspace()));
  afterEach(() => {
    killPtyLeftovers();
    killLeftovers();
    for (const pid of pids.splice(0)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone, as it should be
      }
    }
    ws.remove();
  });

  describe('on a terminal', () => {
    before(function () {
      if (!HAS_SCRIPT) this.skip(); // no util-linux `script` to make a pseudo-terminal with
    });

    it('asks before running: y runs the command, and the model gets its output', async () => {
      const cli = new PtyCli(['--provider', 'echo', '--max-steps', '1', '--session', 's.jsonl', 'run', toolCallLine('b1', 'bash', { command: 'echo ran > yes.txt; echo done' })], ws.cwd);
      await cli.waitFor(ANSWERS);
      expect(asked(cli, 'echo ran > yes.txt; echo done'), cli.output).to.equal(true);
      expect(existsSync(join(ws.cwd, 'yes.txt')), 'nothing runs before the answer').to.equal(false);
      cli.type(`y${KEY.enter}`);
      expect(await cli.waitForExit()).to.equal(STOPPED_AT_STEP_LIMIT);
      expect(existsSync(join(ws.cwd, 'yes.txt'))).to.equal(true);
      expect(screen(cli)).to.include('✓ #1 bash: $ echo ran > yes.txt; echo done');
      expect(toolMessages(join(ws.cwd, 's.jsonl')).get('b1')).to.include('done');
    });

    it('n denies: the command does not run, and the model is told the user denied it', async () => {
      const cli = new PtyCli(['--provider', 'echo', '--max-steps', '1', '--session', 's.jsonl', 'run', toolCallLine('b1', 'bash', { command: 'touch no.txt' })], ws.cwd);
      await cli.waitFor(ANSWERS);
      cli.type(`n${KEY.enter}`);
      expect(await cli.waitForExit()).to.equal(STOPPED_AT_STEP_LIMIT);
      expect(existsSync(join(ws.cwd, 'no.txt')), 'the command never ran').to.equal(false);
      expect(screen(cli)).to.include(`✗ #1 bash: The tool call was denied: ${USER_DENIED}`);
      expect(screen(cli)).to.include(USAGE_LINE);
      expect(toolMessages(join(ws.cwd, 's.jsonl')).get('b1')).to.include(USER_DENIED);
    });

    it('a approves this call and every later one of the session without asking again; another answer is asked again', async () => {
      const script = [toolCallLine('b1', 'bash', { command: 'touch one.txt' }), toolCallLine('b2', 'bash', { command: 'touch two.txt' })].join('\n');
      const cli = new PtyCli(['--provider', 'echo', '--max-steps', '1', 'run', script], ws.cwd);
      await cli.waitFor(ANSWERS);
      let from = cli.output.length;
      cli.type(`maybe${KEY.enter}`);
      await cli.waitFor('Please answer y (yes), n (no) or a (always for this session): ', { from });
      from = cli.output.length;
      cli.type(`a${KEY.enter}`);
      expect(await cli.waitForExit()).to.equal(STOPPED_AT_STEP_LIMIT);
      expect(existsSync(join(ws.cwd, 'one.txt'))).to.equal(true);
      expect(existsSync(join(ws.cwd, 'two.txt'))).to.equal(true);
      expect(stripEscapes(cli.output).split(ANSWERS), 'one question only').to.have.length(2);
      expect(stripEscapes(cli.output.slice(from))).not.to.include('Run bash:');
    });

    it('a in the REPL holds for the later turns of the session', async () => {
      const cli = new PtyCli(['--provider', 'echo', '--max-steps', '1'], ws.cwd);
      await cli.waitForPrompt();
      cli.type(`${toolCallLine('b1', 'bash', { command: 'touch first.txt' })}${KEY.enter}`);
      await cli.waitFor(ANSWERS);
      cli.type(`a${KEY.enter}`);
      await cli.waitFor(USAGE_LINE);
      await cli.waitForPrompt(cli.output.indexOf(USAGE_LINE));
      const from = cli.output.length;
      cli.type(`${toolCallLine('b2', 'bash', { command: 'touch second.txt' })}${KEY.enter}`);
      await cli.waitFor(USAGE_LINE, { from });
      cli.type(KEY.ctrlD);
      expect(await cli.waitForExit()).to.equal(STOPPED_AT_STEP_LIMIT);
      expect(existsSync(join(ws.cwd, 'first.txt'))).to.equal(true);
      expect(existsSync(join(ws.cwd, 'second.txt'))).to.equal(true);
      expect(stripEscapes(cli.output.slice(from))).not.to.include(ANSWERS);
    });

    it('nothing draws over the question while it waits (no spinner, no other call)', async () => {
      // Two calls: while the first is asked, the second waits its turn and the spinner is off.
      const script = [toolCallLine('b1', 'bash', { command: 'echo one' }), toolCallLine('b2', 'bash', { command: 'echo two' })].join('\n');
      const cli = new PtyCli(['--provider', 'echo', '--max-steps', '1', 'run', script], ws.cwd);
      await cli.waitFor(ANSWERS);
      const asked = cli.output.length;
      await new Promise((resolve) => setTimeout(resolve, 400)); // the spinner draws every 80 ms
      expect(cli.output.slice(asked), 'written while the question waits').to.equal('');
      expect(cli.output.endsWith(`${question('echo one')} `), 'the question is the last thing on the screen').to.equal(true);
      cli.type(`n${KEY.enter}`);
      await cli.waitFor(question('echo two'), { from: asked });
      cli.type(`y${KEY.enter}`);
      expect(await cli.waitForExit()).to.equal(STOPPED_AT_STEP_LIMIT);
      expect(screen(cli)).to.include(`✗ #1 bash: The tool call was denied: ${USER_DENIED}`);
      expect(screen(cli)).to.include('✓ #2 bash: $ echo two');
    });

    it('Ctrl-D at the question denies (no answer), and the run ends normally', async () => {
      const cli = new PtyCli(['--provider', 'echo', '--max-steps', '1', '--session', 's.jsonl', 'run', toolCallLine('b1', 'bash', { command: 'touch eof.txt' })], ws.cwd, { columns: 200 });
      await cli.waitFor(ANSWERS);
      cli.type(KEY.ctrlD);
      expect(await cli.waitForExit()).to.equal(STOPPED_AT_STEP_LIMIT);
      expect(existsSync(join(ws.cwd, 'eof.txt'))).to.equal(false);
      expect(screen(cli)).to.include(`✗ #1 bash: The tool call was denied: ${NO_ANSWER}`);
      expect(toolMessages(join(ws.cwd, 's.jsonl')).get('b1')).to.include(NO_ANSWER);
    });

    it('Ctrl-D at the question in the REPL denies, and ends the input: the session ends after the turn', async () => {
      const cli = new PtyCli(['--provider', 'echo', '--max-steps', '1', '--session', 's.jsonl'], ws.cwd, { columns: 200 });
      await cli.waitForPrompt();
      cli.type(`${toolCallLine('b1', 'bash', { command: 'touch eof.txt' })}${KEY.enter}`);
      await cli.waitFor(ANSWERS);
      cli.type(KEY.ctrlD);
      expect(await cli.waitForExit()).to.equal(STOPPED_AT_STEP_LIMIT);
      expect(existsSync(join(ws.cwd, 'eof.txt'))).to.equal(false);
      expect(screen(cli)).to.include(`✗ #1 bash: The tool call was denied: ${NO_ANSWER}`);
      expect(screen(cli)).to.include(USAGE_LINE);
      expect(toolMessages(join(ws.cwd, 's.jsonl')).get('b1')).to.include(NO_ANSWER);
    });

    it('Ctrl-C at the question stops the turn: exit 130, the approved command running beside it is stopped, nothing runs after', async () => {
      const pidFile = join(ws.base, 'sleep.pid');
      const script = [toolCallLine('b1', 'bash', { command: `echo $$ > ${pidFile}; exec sleep 30` }), toolCallLine('b2', 'bash', { command: 'touch never.txt' })].join('\n');
      const cli = new PtyCli(['--provider', 'echo', '--max-steps', '1', '--session', 's.jsonl', 'run', script], ws.cwd);
      await cli.waitFor(ANSWERS);
      cli.type(`y${KEY.enter}`);
      const sleeper = Number(await waitForFileLine(pidFile));
      pids.push(sleeper);
      expect(isAlive(sleeper)).to.equal(true);
      await cli.waitFor(question('touch never.txt'));
      cli.type(KEY.ctrlC);
      expect(await cli.waitForExit()).to.equal(130);
      expect(await waitUntilGone(sleeper, 5_000), `the approved command's sleep (pid ${sleeper}) was stopped`).to.equal(true);
      expect(existsSync(join(ws.cwd, 'never.txt'))).to.equal(false);
      expect(screen(cli).filter((line) => line !== '').at(-1), 'run has exited: no second Ctrl-C to offer').to.equal('⏹ interrupted: the step was aborted');
      // The step is not in the history; the call ledger recorded that b1 started (b2 never did).
      const records = readJsonl(join(ws.cwd, 's.jsonl'));
      expect(records.map((line) => line['role'])).to.deep.equal(['user', '_call_started']);
      expect(records[0]).to.deep.equal({ role: 'user', content: script });
      expect(records[1]).to.include({ index: 0 });
    });

    it('Ctrl-C at the question in the REPL stops the turn and keeps the session', async () => {
      const cli = new PtyCli(['--provider', 'echo', '--max-steps', '1'], ws.cwd);
      await cli.waitForPrompt();
      cli.type(`${toolCallLine('b1', 'bash', { command: 'touch never.txt' })}${KEY.enter}`);
      await cli.waitFor(ANSWERS);
      const from = cli.output.length;
      cli.type(KEY.ctrlC);
      await cli.waitFor('⏹ interrupted', { from });
      await cli.waitForPrompt(cli.output.indexOf('⏹ interrupted', from));
      expect(cli.child.exitCode, 'the session goes on').to.equal(null);
      cli.type(`text: still here${KEY.enter}`);
      await cli.waitFor('still here', { from: cli.output.indexOf('⏹ interrupted', from) });
      cli.type(KEY.ctrlD);
      expect(await cli.waitForExit()).to.equal(0);
      expect(existsSync(join(ws.cwd, 'never.txt'))).to.equal(false);
    });

    it('shows a command with escape sequences, carriage returns and bidi overrides escaped, in the question and in the result', async () => {
      const command = 'echo safe\r\x1b[2K\x1b[1Arm -rf ~ \u202e# txt.exe';
      const cli = new PtyCli(['--provider', 'echo', '--max-steps', '1', 'run', toolCallLine('b1', 'bash', { command: `true ${command}` })], ws.cwd);
      await cli.waitFor(ANSWERS);
      const shown = 'true echo safe\\r\\x1b[2K\\x1b[1Arm -rf ~ \\u{202e}# txt.exe';
      expect(asked(cli, shown), cli.output).to.equal(true);
      expect(screen(cli)).to.include('(characters the terminal would not print as themselves are shown escaped, e.g. \\x1b for ESC)');
      cli.type(`y${KEY.enter}`);
      expect(await cli.waitForExit()).to.equal(STOPPED_AT_STEP_LIMIT);
      expect(screen(cli)).to.include(`✓ #1 bash: $ ${shown}`);
      for (const raw of ['\x1b[2K\x1b[1A', '\u202e', 'safe\r']) expect(cli.output, JSON.stringify(raw)).not.to.include(raw);
    });

    it('arguments that are not a command are shown as they came, escaped; approved, the call gets the usual invalid-arguments error', async () => {
      const call = `tool_call: ${JSON.stringify({ id: 'b1', name: 'bash', arguments: '{"cmd": "ls\u001b[2J"' })}`;
      const cli = new PtyCli(['--provider', 'echo', '--max-steps', '1', '--session', 's.jsonl', 'run', call], ws.cwd, { columns: 200 });
      await cli.waitFor(ANSWERS.slice(1));
      expect(screen(cli).some((line) => line.startsWith(`Run bash with arguments {"cmd": "ls\\x1b[2J"${ANSWERS} `)), cli.output).to.equal(true);
      expect(cli.output).not.to.include('\x1b[2J');
      cli.type(`y${KEY.enter}`);
      expect(await cli.waitForExit()).to.equal(STOPPED_AT_STEP_LIMIT);
      const result = toolMessages(join(ws.cwd, 's.jsonl')).get('b1');
      expect(result).to.be.a('string').and.include('Error parsing JSON arguments');
    });

    it('shows a very long command marked: its start, its end, and how much is left out', async () => {
      const command = `echo start ${'x'.repeat(5_000)} end`;
      const cli = new PtyCli(['--provider', 'echo', '--max-steps', '1', 'run', toolCallLine('b1', 'bash', { command })], ws.cwd);
      await cli.waitFor(ANSWERS);
      const screen = stripEscapes(cli.output).replace(/\r?\n/g, '');
      expect(screen).to.include(`Run bash: echo start ${'x'.repeat(1_189)} [… 3,215 characters not shown …] ${'x'.repeat(596)} end${ANSWERS}`);
      cli.type(`n${KEY.enter}`);
      expect(await cli.waitForExit()).to.equal(STOPPED_AT_STEP_LIMIT);
    });

    it('--json on a terminal never asks: bash is refused unless --allow-bash', async () => {
      const cli = new PtyCli(['--provider', 'echo', '--max-steps', '1', '--json', 'run', toolCallLine('b1', 'bash', { command: 'touch no.txt' })], ws.cwd);
      expect(await cli.waitForExit()).to.equal(STOPPED_AT_STEP_LIMIT);
      expect(cli.output).not.to.include('Run bash');
      expect(existsSync(join(ws.cwd, 'no.txt'))).to.equal(false);
      const events = jsonEvents(stripEscapes(cli.output).replace(/\r\n/g, '\n'));
      expect(events.find((e) => e.type === 'approval_decision')).to.deep.include({ decision: { type: 'deny', reason: NOBODY_TO_ASK } });
    });

    it('--allow-bash runs without asking', async () => {
      const cli = new PtyCli(['--provider', 'echo', '--max-steps', '1', '--allow-bash', 'run', toolCallLine('b1', 'bash', { command: 'touch yes.txt' })], ws.cwd);
      expect(await cli.waitForExit()).to.equal(STOPPED_AT_STEP_LIMIT);
      expect(cli.output).not.to.include('Run bash');
      expect(existsSync(join(ws.cwd, 'yes.txt'))).to.equal(true);
    });
  });

  describe('without a terminal', () => {
    it('refuses bash: the model gets the reason, the user one line saying to pass --allow-bash', async () => {
      const script = [toolCallLine('b1', 'bash', { command: 'touch one.txt' }), toolCallLine('b2', 'bash', { command: 'touch two.txt' })].join('\n');
      const [plain, piped] = await Promise.all([
        runCli(['--provider', 'echo', '--max-steps', '1', '--session', 's.jsonl', 'run', script], ws.cwd),
        runCli(['--provider', 'echo', '--max-steps', '1'], ws.cwd, { input: `${toolCallLine('c1', 'bash', { command: 'touch chat.txt' })}\n` }),
      ]);
      expect(plain.code, plain.stderr).to.equal(STOPPED_AT_STEP_LIMIT);
      for (const file of ['one.txt', 'two.txt', 'chat.txt']) expect(existsSync(join(ws.cwd, file)), file).to.equal(false);
      const lines = plain.stdout.split('\n');
      expect(lines.filter((line) => line === NOBODY_TO_ASK_NOTICE), 'the notice, once').to.have.length(1);
      expect(lines).to.include(`✗ #1 bash: The tool call was denied: ${NOBODY_TO_ASK}`);
      expect(lines).to.include(`✗ #2 bash: The tool call was denied: ${NOBODY_TO_ASK}`);
      expect(toolMessages(join(ws.cwd, 's.jsonl')).get('b2')).to.include('--allow-bash');
      expect(piped.code, piped.stderr).to.equal(STOPPED_AT_STEP_LIMIT);
      expect(piped.stdout).to.include(`${NOBODY_TO_ASK_NOTICE}\n`);
      expect(piped.stdout).to.include(`✗ #1 bash: The tool call was denied: ${NOBODY_TO_ASK}`);
    });

    it('--json: approval_request and approval_decision events, in order with the call and its result', async () => {
      const script = [toolCallLine('r1', 'read_file', { path: 'notes.txt' }), toolCallLine('b1', 'bash', { command: 'touch no.txt' })].join('\n');
      const run = await runCli(['--provider', 'echo', '--max-steps', '1', '--json', 'run', script], ws.cwd);
      expect(run.code, run.stderr).to.equal(STOPPED_AT_STEP_LIMIT);
      expect(run.stderr).to.equal('');
      const events = jsonEvents(run.stdout);
      const bash = events.filter((e) => JSON.stringify(e).includes('"b1"') && e.type !== 'step_end' && e.type !== 'turn_end');
      expect(bash.map((e) => e.type)).to.deep.equal(['part', 'tool_call', 'approval_request', 'approval_decision', 'tool_result']);
      const call = { type: 'function', id: 'b1', function: { name: 'bash', arguments: JSON.stringify({ command: 'touch no.txt' }) } };
      expect(bash[2]).to.deep.equal({ type: 'approval_request', step: 1, toolCall: call, index: 1 });
      expect(bash[3]).to.deep.equal({ type: 'approval_decision', step: 1, toolCall: call, index: 1, decision: { type: 'deny', reason: NOBODY_TO_ASK } });
      expect(events.filter((e) => e.type === 'info')).to.deep.equal([{ type: 'info', message: NOBODY_TO_ASK_NOTICE }]);
      expect(events.filter((e) => e.type.startsWith('approval_') && JSON.stringify(e).includes('"r1"')), 'read_file needs no approval').to.deep.equal([]);
      expect(events.at(-1)).to.include({ type: 'turn_end', stopReason: 'max_steps' });
      expect(existsSync(join(ws.cwd, 'no.txt'))).to.equal(false);
    });

    it('--allow-bash: runs without asking, and no approval events', async () => {
      const run = await runCli(['--provider', 'echo', '--max-steps', '1', '--allow-bash', '--json', 'run', toolCallLine('b1', 'bash', { command: 'touch yes.txt' })], ws.cwd);
      expect(run.code, run.stderr).to.equal(STOPPED_AT_STEP_LIMIT);
      expect(existsSync(join(ws.cwd, 'yes.txt'))).to.equal(true);
      expect(jsonEvents(run.stdout).filter((e) => e.type.startsWith('approval_') || e.type === 'info')).to.deep.equal([]);
    });
  });
});
