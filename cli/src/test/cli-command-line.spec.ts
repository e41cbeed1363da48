/**
 * The command line of `kosong` (issue 21, item 16): the prompt of `run` from stdin, `kosong help`,
 * the global options in a command's help, the exit code of a turn stopped at `--max-steps`, `--redis`
 * with `--provider`, the message for a missing API key, and setup errors as JSON events with `--json`.
 */
import { expect } from 'chai';
import { jsonEvents, killLeftovers, makeWorkspace, runCli, toolCallLine, type CliExit, type Workspace } from './cli-harness.js';

/** What the README documents for a turn that stopped at the step limit. */
const MAX_STEPS_EXIT_CODE = 3;

describe('kosong CLI: the command line', function () {
  this.timeout(60_000);
  let ws: Workspace;

  before(() => {
    ws = makeWorkspace();
  });
  after(() => {
    killLeftovers();
    ws.remove();
  });

  describe('run reads its prompt from stdin', () => {
    it('when no prompt is given and stdin is not a terminal (`echo … | kosong run`)', async () => {
      const result = await runCli(['--provider', 'echo', 'run'], ws.cwd, { input: 'text: from a pipe\n' });
      expect(result.stderr).to.equal('');
      expect(result.code).to.equal(0);
      expect(result.stdout.split('\n')[0]).to.equal('from a pipe');
    });

    it('when the prompt is `-`, several lines as one prompt', async () => {
      const script = `${toolCallLine('c1', 'calculate', { expression: '6 * 7' })}\n---\ntext: it is 42\n`;
      const result = await runCli(['--provider', 'echo', 'run', '-'], ws.cwd, { input: script });
      expect(result.stderr).to.equal('');
      expect(result.code).to.equal(0);
      expect(result.stdout).to.include('✓ #1 calculate: 6 * 7 = 42\nit is 42\n');
    });

    it('an empty stdin is a usage error (exit 2), and nothing runs', async () => {
      const result = await runCli(['--provider', 'echo', 'run'], ws.cwd, { input: '  \n' });
      expect(result.code).to.equal(2);
      expect(result.stdout).to.equal('');
      expect(result.stderr).to.equal('kosong: run: no prompt: give it as arguments (kosong run "…"), or on stdin (echo "…" | kosong run)\n');
    });
  });

  describe('help', () => {
    let help: CliExit;
    let helpRun: CliExit;
    let runHelp: CliExit;

    before(async () => {
      [help, helpRun, runHelp] = await Promise.all([runCli(['help'], ws.cwd), runCli(['help', 'run'], ws.cwd), runCli(['run', '--help'], ws.cwd)]);
    });

    it('`kosong help` prints the help of the command and exits 0', () => {
      expect(help.stderr).to.equal('');
      expect(help.code).to.equal(0);
      expect(help.stdout).to.match(/^Usage: kosong \[options\] \[command\]\n/);
      expect(help.stdout).to.match(/^ {2}help \[command\] +/m);
    });

    it('`kosong help run` prints the help of run, as `kosong run --help` does', () => {
      expect(helpRun.stderr).to.equal('');
      expect(helpRun.code).to.equal(0);
      expect(helpRun.stdout).to.match(/^Usage: kosong run \[options\] \[prompt\.\.\.\]\n/);
      expect(helpRun.stdout).to.equal(runHelp.stdout);
    });

    it('`kosong run --help` shows the global options too', () => {
      expect(runHelp.code).to.equal(0);
      expect(runHelp.stdout).to.include('Global Options:');
      for (const flag of ['--provider <name>', '--session <file>', '--allow-bash', '--max-steps <n>', '--json']) expect(runHelp.stdout).to.include(flag);
    });
  });

  it(`a turn that reaches --max-steps exits ${MAX_STEPS_EXIT_CODE}, having said so`, async () => {
    const script = `${toolCallLine('c1', 'calculate', { expression: '1 + 1' })}\n---\n${toolCallLine('c2', 'calculate', { expression: '2 + 2' })}\n---\ntext: done`;
    const [limited, json] = await Promise.all([
      runCli(['--provider', 'echo', '--max-steps', '2', 'run', script], ws.cwd),
      runCli(['--provider', 'echo', '--max-steps', '1', '--json', 'run', script], ws.cwd),
    ]);
    expect(limited.stderr).to.equal('');
    expect(limited.code).to.equal(MAX_STEPS_EXIT_CODE);
    expect(limited.stdout.trimEnd().split('\n').at(-1)).to.match(/^— 2 steps · .* · stopped at the step limit$/);
    expect(json.code).to.equal(MAX_STEPS_EXIT_CODE);
    expect(jsonEvents(json.stdout).at(-1)).to.include({ type: 'turn_end', stopReason: 'max_steps', steps: 1 });
  });

  it('--redis with --provider is refused (exit 2) before anything is sent: the workers choose the provider', async () => {
    const started = Date.now();
    const result = await runCli(['--redis', 'redis://127.0.0.1:1', '--provider', 'echo', 'run', 'hi'], ws.cwd);
    expect(result.code).to.equal(2);
    expect(result.stdout).to.equal('');
    expect(result.stderr).to.equal(
      'kosong: --provider: with --redis the turns run on `kosong worker` processes, with the provider the worker was started with (kosong --redis <url> --provider <name> worker)\n',
    );
    expect(Date.now() - started, 'no wait for Redis').to.be.below(10_000);
  });

  it("a missing API key names the provider's environment variable and --provider, not a plugin option", async () => {
    const result = await runCli(['--provider', 'openai', 'run', 'hi'], ws.cwd, { env: { OPENAI_API_KEY: '' } });
    expect(result.code).to.equal(2);
    expect(result.stdout).to.equal('');
    expect(result.stderr).to.equal(
      'kosong: the openai provider needs an API key: set the OPENAI_API_KEY environment variable (OPENAI_API_KEY=… kosong --provider openai …), ' +
        'or choose another provider with --provider (kosong providers lists them)\n',
    );
  });

  describe('with --json, setup errors are JSON events on stdout (and the line on stderr)', () => {
    const cases: Array<{ what: string; args: string[]; message: RegExp }> = [
      { what: 'an unknown provider', args: ['--json', '--provider', 'nope', 'run', 'hi'], message: /^unknown provider "nope"; available: / },
      { what: 'a bad option value', args: ['--json', '--max-steps', '0', 'run', 'hi'], message: /--max-steps <n>' argument '0' is invalid\. expected a positive integer/ },
      { what: 'an unknown command', args: ['--json', 'hello'], message: /^unknown command 'hello'/ },
      { what: 'a missing key', args: ['--json', '--provider', 'openai', 'run', 'hi'], message: /^the openai provider needs an API key: / },
    ];
    for (const { what, args, message } of cases) {
      it(what, async () => {
        const result = await runCli(args, ws.cwd, { env: { OPENAI_API_KEY: '' } });
        expect(result.code).to.equal(2);
        const events = jsonEvents(result.stdout);
        expect(events, result.stdout).to.have.length(1);
        expect(events[0]).to.have.keys(['type', 'message', 'exitCode']);
        expect(events[0]).to.include({ type: 'setup_failed', exitCode: 2 });
        expect(events[0]!['message']).to.match(message);
        expect(result.stderr.trimEnd().split('\n'), 'one line on stderr').to.have.length(1);
      });
    }
  });
});
