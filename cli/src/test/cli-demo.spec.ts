/**
 * `kosong run` with the default (demo) provider, plain and `--json`, and the command-line surface
 * (`providers`, a bad `--provider`, a bad `--max-steps`), the CLI running as a subprocess.
 */
import { addUsage, inputTokens, tokenUsage, type TokenUsage } from '@kosong/core';
import { parseEchoScript } from '@kosong/provider-echo';
import { ChatCompletionsServer, textReply } from '@kosong/provider-openai/testing';
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEMO_NOTICE, demoScripts } from '../demo.js';
import { jsonEvents, killLeftovers, makeWorkspace, runCli, type CliExit, type Workspace } from './cli-harness.js';

/** What the demo model does, read from its own scripts (so the test follows the script, not a copy). */
const demo = demoScripts().map((script) => {
  const parsed = parseEchoScript(script);
  return {
    usage: parsed.usage ?? tokenUsage(),
    texts: parsed.parts.flatMap((p) => (p.type === 'text' ? [p.text] : [])),
    thinks: parsed.parts.flatMap((p) => (p.type === 'think' ? [p.think] : [])),
    calls: parsed.parts.flatMap((p) => (p.type === 'function' ? [{ id: p.id, name: p.function.name, arguments: p.function.arguments ?? '' }] : [])),
  };
});
const demoUsage: TokenUsage = demo.reduce((sum, step) => addUsage(sum, step.usage), tokenUsage());
const en = (n: number): string => n.toLocaleString('en');
const ESCAPE_MESSAGE = 'Path "../../etc/passwd" is outside the working directory; only paths inside it are allowed.';

/** Asserts that the `needles` occur in `haystack` in this order (each after the previous one). */
function expectInOrder(haystack: string, needles: readonly string[]): void {
  let from = 0;
  for (const needle of needles) {
    const at = haystack.indexOf(needle, from);
    expect(at, `"${needle}" after offset ${from} in:\n${haystack}`).to.be.at.least(0);
    from = at + needle.length;
  }
}

describe('kosong CLI: one-shot run with the demo provider', function () {
  this.timeout(60_000);
  let ws: Workspace;
  let plain: CliExit;
  let json: CliExit;
  let limited: CliExit;

  before(async () => {
    expect(demo, 'the demo is three steps').to.have.length(3);
    ws = makeWorkspace();
    // Independent runs, started together to keep the suite fast.
    [plain, json, limited] = await Promise.all([
      runCli(['run', 'Show me around'], ws.cwd),
      runCli(['--json', 'run', 'Show me around'], ws.cwd),
      runCli(['--max-steps', '2', 'run', 'Show me around'], ws.cwd),
    ]);
  });
  after(() => {
    killLeftovers();
    ws.remove();
  });

  describe('plain output (no TTY)', () => {
    it('exits 0 with nothing on stderr and no colour codes', () => {
      expect(plain.stderr).to.equal('');
      expect(plain.code).to.equal(0);
      expect(plain.stdout).not.to.include('\x1b[');
      expect(plain.stdout).not.to.include('\r');
    });

    it('streams the text and thinking of every step, in order', () => {
      expectInOrder(plain.stdout, demo.flatMap((step) => [...step.thinks, ...step.texts]));
      expect(plain.stdout).to.include(`thinking: ${demo[0]!.thinks[0]}`);
      // The last step calls no tool: its text arrives in one piece.
      expect(plain.stdout).to.include(demo[2]!.texts.join(''));
    });

    it('shows each tool call as it is made and its result, refusing the escape from the working directory', () => {
      const lines = plain.stdout.split('\n');
      const packageJson = readFileSync(join(ws.cwd, 'package.json'), 'utf8');
      const expected: Array<[string, string]> = [
        ['→ #1 list_directory({"path":"."})', `✓ #1 list_directory: ${ws.entries.length} entries in .`],
        ['→ #2 read_file({"path":"package.json"})', `✓ #2 read_file: Read package.json (${packageJson.split('\n').length} lines)`],
        ['→ #3 read_file({"path":"../../etc/passwd"})', `✗ #3 read_file: ${ESCAPE_MESSAGE}`],
        ['→ #4 calculate({"expression":"32 * 500 * 1.3"})', '✓ #4 calculate: 32 * 500 * 1.3 = 20800'],
      ];
      let previousCall = -1;
      for (const [call, result] of expected) {
        const callAt = lines.indexOf(call);
        const resultAt = lines.indexOf(result);
        expect(callAt, `line ${call} in:\n${plain.stdout}`).to.be.above(previousCall);
        expect(resultAt, `line ${result} after ${call} in:\n${plain.stdout}`).to.be.above(callAt);
        previousCall = callAt;
      }
      expect(lines.filter((l) => l.startsWith('→ '))).to.have.length(4);
      expect(lines.filter((l) => l.startsWith('✓ ') || l.startsWith('✗ '))).to.have.length(4);
    });

    it('ends with the usage line of the turn', () => {
      const lines = plain.stdout.trimEnd().split('\n');
      const usageLine = `— 3 steps · ${en(inputTokens(demoUsage))} input tokens (${en(demoUsage.inputCacheRead)} cached) · ${en(demoUsage.output)} output tokens`;
      expect(lines.at(-1)).to.equal(usageLine);
      expect(lines.filter((l) => l.startsWith('— '))).to.have.length(1);
    });

    it('with --max-steps 2, stops after the second step, says so and exits 3', () => {
      expect(limited.stderr).to.equal('');
      expect(limited.code).to.equal(3);
      const usage = addUsage(demo[0]!.usage, demo[1]!.usage);
      expect(limited.stdout.trimEnd().split('\n').at(-1)).to.equal(
        `— 2 steps · ${en(inputTokens(usage))} input tokens (${en(usage.inputCacheRead)} cached) · ${en(usage.output)} output tokens · stopped at the step limit`,
      );
      expect(limited.stdout).to.include('✓ #4 calculate: 32 * 500 * 1.3 = 20800');
      expect(limited.stdout).not.to.include(demo[2]!.texts[0]!);
    });
  });

  describe('--json', () => {
    it('prints one JSON event with a type per line, and nothing else', () => {
      expect(json.stderr).to.equal('');
      expect(json.code).to.equal(0);
      const events = jsonEvents(json.stdout);
      const types = new Set(events.map((e) => e.type));
      for (const type of ['turn_start', 'step_start', 'part', 'tool_call', 'tool_result', 'step_end', 'turn_end']) {
        expect(types, `a ${type} event`).to.include(type);
      }
      expect(events[0]).to.deep.equal({ type: 'turn_start', input: 'Show me around' });
      expect(events.at(-1)!.type).to.equal('turn_end');
      expect(events.filter((e) => e.type === 'turn_end')).to.have.length(1);
    });

    it('brackets each step with step_start and step_end, in step order', () => {
      const events = jsonEvents(json.stdout);
      const brackets = events.filter((e) => e.type === 'step_start' || e.type === 'step_end').map((e) => `${e.type}:${String(e.step)}`);
      expect(brackets).to.deep.equal(['step_start:1', 'step_end:1', 'step_start:2', 'step_end:2', 'step_start:3', 'step_end:3']);
      // Every part and tool event lies inside the step it names.
      let current = 0;
      for (const event of events) {
        if (event.type === 'step_start') current = event.step as number;
        if (event.type === 'part' || event.type === 'tool_call' || event.type === 'tool_result') expect(event.step).to.equal(current);
      }
    });

    it('streams the parts of the script', () => {
      const parts = jsonEvents(json.stdout)
        .filter((e) => e.type === 'part')
        .map((e) => e.part as { type: string; text?: string; think?: string });
      const text = parts.filter((p) => p.type === 'text').map((p) => p.text).join('');
      const think = parts.filter((p) => p.type === 'think').map((p) => p.think).join('');
      expect(text).to.equal(demo.map((step) => step.texts.join('')).join(''));
      expect(think).to.equal(demo.map((step) => step.thinks.join('')).join(''));
    });

    it('reports every tool call and its result, each result after its call', () => {
      const events = jsonEvents(json.stdout);
      const calls = events.filter((e) => e.type === 'tool_call').map((e) => e.toolCall as { id: string; function: { name: string; arguments: string } });
      expect(calls.map((c) => [c.id, c.function.name, c.function.arguments])).to.deep.equal(demo.flatMap((s) => s.calls.map((c) => [c.id, c.name, c.arguments])));
      const results = new Map(
        events
          .filter((e) => e.type === 'tool_result')
          .map((e) => {
            const result = e.result as { toolCallId: string; returnValue: { isError: boolean; output: string; message: string } };
            return [result.toolCallId, { ...result.returnValue, at: events.indexOf(e) }] as const;
          }),
      );
      expect([...results.keys()].sort()).to.deep.equal(calls.map((c) => c.id).sort());
      for (const call of calls) {
        const callAt = events.findIndex((e) => e.type === 'tool_call' && (e.toolCall as { id: string }).id === call.id);
        expect(results.get(call.id)!.at, `result of ${call.id} after its call`).to.be.above(callAt);
      }
      expect(results.get('call_list')).to.include({ isError: false, output: ws.entries.join('\n') });
      expect(results.get('call_read')).to.include({ isError: false, output: readFileSync(join(ws.cwd, 'package.json'), 'utf8') });
      expect(results.get('call_escape')).to.include({ isError: true, message: ESCAPE_MESSAGE });
      expect(results.get('call_calc')).to.include({ isError: false, output: '20800' });
    });

    it('gives step_end the tool results in call order, and turn_end the summed usage and the stop reason', () => {
      const events = jsonEvents(json.stdout);
      const stepEnds = events.filter((e) => e.type === 'step_end');
      expect(stepEnds.map((e) => (e.toolResults as Array<{ toolCallId: string }>).map((r) => r.toolCallId))).to.deep.equal(demo.map((s) => s.calls.map((c) => c.id)));
      expect(stepEnds.map((e) => e.finishReason)).to.deep.equal(['tool_calls', 'tool_calls', 'stop']);
      expect(stepEnds.map((e) => e.usage)).to.deep.equal(demo.map((s) => s.usage));
      const end = events.at(-1)!;
      expect(end).to.include({ type: 'turn_end', steps: 3, stopReason: 'no_tool_calls' });
      expect(end.usage).to.deep.equal(demoUsage);
      expect((end.message as { role: string }).role).to.equal('assistant');
    });
  });
});

describe('kosong CLI: command line', function () {
  this.timeout(60_000);
  const badMaxSteps = ['0', '2.5'];
  let ws: Workspace;
  let providers: CliExit;
  let unknown: CliExit;
  let rejected: CliExit[];
  let version: CliExit;
  let unknownCommand: CliExit;
  let echoModel: CliExit;

  before(async () => {
    ws = makeWorkspace();
    [providers, unknown, version, unknownCommand, echoModel, ...rejected] = await Promise.all([
      runCli(['providers'], ws.cwd),
      runCli(['--provider', 'no-such-model', 'run', 'hi'], ws.cwd),
      runCli(['--version'], ws.cwd),
      runCli(['hello', 'there'], ws.cwd),
      runCli(['--provider', 'echo', '--model', 'big', 'run', 'text: hi'], ws.cwd),
      ...badMaxSteps.map((bad) => runCli([`--max-steps=${bad}`, 'run', 'hi'], ws.cwd)),
    ]);
  });
  after(() => {
    killLeftovers();
    ws.remove();
  });

  it('`kosong providers` lists the demo and echo providers', () => {
    expect(providers.code).to.equal(0);
    expect(providers.stderr).to.equal('');
    const names = providers.stdout
      .trimEnd()
      .split('\n')
      .map((line) => line.split(/\s+/, 1)[0]);
    expect(names).to.include.members(['demo', 'echo']);
    expect(names[0]).to.equal('demo');
  });

  it('an unknown --provider exits 2, naming the available ones, and runs nothing', () => {
    expect(unknown.code).to.equal(2);
    expect(unknown.stdout).to.equal('');
    expect(unknown.stderr).to.match(/unknown provider "no-such-model"; available: .*\bdemo\b/);
    expect(unknown.stderr).to.match(/available: .*\becho\b/);
  });

  it('--version prints the version of the package and exits 0', () => {
    const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(version.code).to.equal(0);
    expect(version.stdout).to.equal(`${manifest.version}\n`);
  });

  it('a word that is not a command is an unknown command (exit 2), with a hint, and runs nothing', () => {
    expect(unknownCommand.code).to.equal(2);
    expect(unknownCommand.stdout).to.equal('');
    expect(unknownCommand.stderr).to.equal(
      `error: unknown command 'hello' (commands: run, chat, worker, providers, usage, sessions, serve, mcp; to ask something once: kosong run "hello there")\n`,
    );
  });

  it('--model is refused for a provider with one model (exit 2), before anything runs', () => {
    expect(echoModel.code).to.equal(2);
    expect(echoModel.stdout).to.equal('');
    expect(echoModel.stderr).to.equal('kosong: --model: the echo provider has one model; --model chooses the model of a provider such as openai or kimi\n');
  });

  it('--model chooses the model of the openai provider (over OPENAI_MODEL), as the request to the server shows', async () => {
    const server = await ChatCompletionsServer.start({ defaultReply: textReply(['fine']) });
    try {
      const env = { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: server.baseURL, OPENAI_MODEL: 'from-env' };
      const [chosen, fromEnv] = await Promise.all([
        runCli(['--provider', 'openai', '--model', 'from-flag', 'run', 'hi'], ws.cwd, { env }),
        runCli(['--provider', 'openai', 'run', 'hi'], ws.cwd, { env }),
      ]);
      for (const run of [chosen, fromEnv]) {
        expect(run.code, run.stderr).to.equal(0);
        expect(run.stdout).to.include('fine');
      }
      const models = server.requests.map((request) => (request.body as { model: string }).model);
      expect(models).to.have.members(['from-flag', 'from-env']);
    } finally {
      await server.close();
    }
  });

  badMaxSteps.forEach((bad, index) => {
    it(`--max-steps ${bad} is rejected before anything runs`, () => {
      const result = rejected[index]!;
      expect(result.code).to.equal(2); // a usage error, like an unknown provider
      expect(result.stdout).to.equal('');
      expect(result.stderr).to.include('--max-steps').and.include('positive integer');
    });
  });
});

describe('kosong CLI: the demo answers every turn', function () {
  this.timeout(60_000);
  let ws: Workspace;

  before(() => (ws = makeWorkspace()));
  after(() => {
    killLeftovers();
    ws.remove();
  });

  it('after its tour, each message gets one answer saying it is a scripted demo and how to choose a real provider, however many there are', async () => {
    const later = Array.from({ length: 24 }, (_, i) => `message ${i + 2}`);
    const chat = await runCli([], ws.cwd, { input: ['Show me around', ...later].map((line) => `${line}\n`).join('') });
    expect(chat.stderr).to.equal('');
    expect(chat.code).to.equal(0);
    expect(chat.stdout).not.to.include('exhausted');
    const usageLines = chat.stdout.split('\n').filter((line) => line.startsWith('— '));
    expect(usageLines, 'one usage line per message').to.have.length(1 + later.length);
    expect(usageLines[0]).to.match(/^— 3 steps /);
    for (const line of usageLines.slice(1)) expect(line).to.match(/^— 1 step /);
    expect(chat.stdout.split(DEMO_NOTICE), 'the notice once per later message').to.have.length(1 + later.length);
    expect(chat.stdout).to.include('kosong providers').and.include('--provider');
    expect(chat.stdout.split(demo[0]!.thinks[0]!), 'the tour is played once').to.have.length(2);
  });

  it('plays its tour again when asked for it', async () => {
    const chat = await runCli([], ws.cwd, { input: 'hi\nwhat can you do?\nshow me the tour again\n' });
    expect(chat.code, chat.stderr).to.equal(0);
    const usageLines = chat.stdout.split('\n').filter((line) => line.startsWith('— '));
    expect(usageLines.map((line) => line.split(' · ')[0])).to.deep.equal(['— 3 steps', '— 1 step', '— 3 steps']);
  });

  it('its turns on a session file go on where the file is: a later run of the session answers with the notice', async () => {
    const first = await runCli(['--session', 'demo.jsonl', 'run', 'Show me around'], ws.cwd);
    expect(first.code, first.stderr).to.equal(0);
    const second = await runCli(['--session', 'demo.jsonl', 'run', 'thanks'], ws.cwd);
    expect(second.code, second.stderr).to.equal(0);
    expect(second.stdout).to.include(DEMO_NOTICE);
    expect(second.stdout).to.match(/^— 1 step /m);
  });
});

describe('kosong CLI: the README', function () {
  this.timeout(30_000);
  const root = fileURLToPath(new URL('../../..', import.meta.url));

  /** The fenced block that follows `heading` in the project README. */
  function blockAfter(heading: string): string {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const at = readme.indexOf(heading);
    expect(at, heading).to.be.at.least(0);
    const match = /```\n([\s\S]*?)```/.exec(readme.slice(at));
    return match![1]!;
  }

  /** A run up to timing: tool results land between streamed text wherever they finish, so the text is compared without them, and the results as a set. */
  function upToTiming(output: string): { text: string; results: string[] } {
    const lines = output.trimEnd().split('\n');
    const isResult = (line: string): boolean => line.startsWith('✓ ') || line.startsWith('✗ ');
    return { text: lines.filter((line) => !isResult(line)).join('\n'), results: lines.filter(isResult).sort() };
  }

  it('shows what `npm start` prints in this repository (its counts of entries and lines too)', async () => {
    const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(manifest.scripts['start']).to.equal('node cli/bin/kosong.js run "Show me around this project"');
    const start = await runCli(['run', 'Show me around this project'], root);
    expect(start.code, start.stderr).to.equal(0);
    expect(upToTiming(blockAfter('A transcript of `npm start`:'))).to.deep.equal(upToTiming(start.stdout));
  });
});
