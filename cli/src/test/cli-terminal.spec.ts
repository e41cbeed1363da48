/**
 * The CLI on a real pseudo-terminal (see pty-harness.ts): the prompt, multi-line input (bracketed
 * paste, `\` continuation), Ctrl-C and Ctrl-D at the prompt, wrapping at the terminal's width, and
 * colours only where they are wanted.
 */
import { expect } from 'chai';
import { join } from 'node:path';
import { killLeftovers, makeWorkspace, readJsonl, type Workspace } from './cli-harness.js';
import { HAS_SCRIPT, KEY, PROMPT, PtyCli, killPtyLeftovers, stripEscapes } from './pty-harness.js';

const PASTE_OFF = '\x1b[?2004l';
const HINT = '(Ctrl-C again to exit, or Ctrl-D; /help for help)';
const USAGE_LINE = '— 1 step · 0 input tokens · 0 output tokens';

describe('kosong CLI on a terminal', function () {
  this.timeout(30_000);
  let ws: Workspace;

  before(function () {
    if (!HAS_SCRIPT) this.skip(); // no util-linux `script` to make a pseudo-terminal with
  });
  beforeEach(() => (ws = makeWorkspace()));
  afterEach(() => {
    killPtyLeftovers();
    killLeftovers();
    ws.remove();
  });

  describe('chat', () => {
    it('a paste of several lines is one message, sent with Enter', async () => {
      const cli = new PtyCli(['--provider', 'echo', '--session', 'paste.jsonl'], ws.cwd);
      await cli.waitForPrompt();
      cli.type(KEY.paste('text: one\ntext: two'));
      await cli.waitFor('text: two');
      expect(stripEscapes(cli.output), 'nothing runs before Enter').not.to.include(USAGE_LINE);
      const before = cli.output.length;
      cli.type(KEY.enter);
      await cli.waitFor(USAGE_LINE, { from: before });
      await cli.waitForPrompt(cli.output.indexOf(USAGE_LINE, before));
      cli.type(KEY.ctrlD);
      expect(await cli.waitForExit()).to.equal(0);
      expect(cli.lines).to.include('onetwo');
      expect(cli.lines.filter((line) => line === USAGE_LINE), 'one turn').to.have.length(1);
      expect(readJsonl(join(ws.cwd, 'paste.jsonl'))).to.deep.equal([
        { role: 'user', content: 'text: one\ntext: two' },
        { role: 'assistant', content: 'onetwo' },
      ]);
    });

    it('a line ending with \\ continues on the next one, under a continuation prompt', async () => {
      const cli = new PtyCli(['--provider', 'echo'], ws.cwd);
      await cli.waitForPrompt();
      cli.type('text: first \\');
      await cli.waitFor('text: first \\');
      cli.type(KEY.enter);
      await cli.waitFor('… ');
      cli.type(`text: second${KEY.enter}`);
      await cli.waitFor(USAGE_LINE);
      cli.type(KEY.ctrlD);
      expect(await cli.waitForExit()).to.equal(0);
      expect(cli.lines).to.include('firstsecond');
      expect(cli.lines.filter((line) => line === USAGE_LINE)).to.have.length(1);
    });

    it('Ctrl-C with text typed clears the line and keeps the session; a second Ctrl-C exits 130 on a line of its own', async () => {
      const cli = new PtyCli(['--provider', 'echo', '--session', 'ctrl-c.jsonl'], ws.cwd);
      await cli.waitForPrompt();
      cli.type('text: never sent');
      await cli.waitFor('text: never sent');
      let from = cli.output.length;
      cli.type(KEY.ctrlC);
      await cli.waitFor(HINT, { from });
      await cli.waitForPrompt(from);
      expect(cli.child.exitCode, 'still running after the first Ctrl-C').to.equal(null);

      from = cli.output.length;
      cli.type(`text: sent${KEY.enter}`);
      await cli.waitFor(USAGE_LINE, { from });
      await cli.waitForPrompt(cli.output.indexOf(USAGE_LINE, from));

      cli.type(KEY.ctrlC);
      await cli.waitFor(HINT, { from: cli.output.indexOf(USAGE_LINE, from) });
      await cli.waitForPrompt(cli.output.lastIndexOf(HINT));
      cli.type(KEY.ctrlC);
      expect(await cli.waitForExit()).to.equal(130);

      expect(readJsonl(join(ws.cwd, 'ctrl-c.jsonl'))).to.deep.equal([
        { role: 'user', content: 'text: sent' },
        { role: 'assistant', content: 'sent' },
      ]);
      expect(cli.lines).to.include(`${PROMPT}text: never sent^C`);
      expect(cli.lines).not.to.include('never sent');
      // The last prompt's line is ended, and bracketed paste is turned off again.
      expect(cli.output.endsWith(`${PASTE_OFF}`) || cli.output.endsWith(`${PASTE_OFF}\r\n`), JSON.stringify(cli.output.slice(-40))).to.equal(true);
      expect(stripEscapes(cli.output).trimEnd().split(/\r*\n/).at(-1)).to.equal(`${PROMPT}^C`);
    });

    it('Ctrl-D at the prompt exits 0, ending the prompt line', async () => {
      const cli = new PtyCli(['--provider', 'echo'], ws.cwd);
      await cli.waitForPrompt();
      cli.type(KEY.ctrlD);
      expect(await cli.waitForExit()).to.equal(0);
      expect(stripEscapes(cli.output)).to.match(/› \r?\n$/);
    });

    it('/help lists the commands and keys; /exit ends the session', async () => {
      const cli = new PtyCli(['--provider', 'echo'], ws.cwd, { columns: 200 });
      await cli.waitForPrompt();
      cli.type(`/help${KEY.enter}`);
      await cli.waitFor('/exit, /quit');
      cli.type(`/exit${KEY.enter}`);
      expect(await cli.waitForExit()).to.equal(0);
      const screen = stripEscapes(cli.output);
      for (const text of ['/help', '/exit, /quit', 'Ctrl-C', 'Ctrl-D', 'continues on the next line']) expect(screen).to.include(text);
    });

    it('with TERM=dumb: no escape codes at all, lines read as typed', async () => {
      const cli = new PtyCli(['--provider', 'echo'], ws.cwd, { env: { TERM: 'dumb' } });
      await cli.waitForPrompt();
      cli.type(`text: plain${KEY.enter}`);
      await cli.waitFor(USAGE_LINE);
      cli.type(KEY.ctrlD);
      expect(await cli.waitForExit()).to.equal(0);
      expect(cli.output).not.to.include('\x1b');
      expect(cli.lines).to.include('plain');
    });
  });

  describe('output', () => {
    const words = Array.from({ length: 60 }, (_, i) => `word${i}${'x'.repeat(i % 7)}`);

    it('wraps streamed text at word boundaries at the terminal width', async () => {
      const script = ['text: ', ...words.map((w) => `text: "${w} "`)].join('\n');
      const cli = new PtyCli(['--provider', 'echo', 'run', script], ws.cwd, { columns: 37 });
      expect(await cli.waitForExit()).to.equal(0);
      const all = cli.lines;
      const lines = all.slice(0, all.findIndex((line) => line.startsWith('— '))).filter((line) => line !== '');
      for (const line of lines) expect(line.length, JSON.stringify(line)).to.be.at.most(37);
      expect(lines.length, 'the text took several lines').to.be.at.least(10);
      expect(lines.join(' ').split(/\s+/)).to.deep.equal(words);
    });

    it('without NO_COLOR it colours on a terminal; with NO_COLOR (on Node 20 too) or TERM=dumb there is no escape code', async () => {
      const script = ['think: pondering', 'text: answer', '---', 'text: done'].join('\n');
      const call = 'tool_call: {"id": "c1", "name": "calculate", "arguments": "{\\"expression\\": \\"1+1\\"}"}';
      const run = (env: Record<string, string>): Promise<PtyCli> => {
        const cli = new PtyCli(['--provider', 'echo', 'run', script.replace('text: answer', `text: answer\n${call}`)], ws.cwd, { env });
        return cli.waitForExit().then(() => cli);
      };
      const [coloured, noColor, dumb] = await Promise.all([run({}), run({ NO_COLOR: '1' }), run({ TERM: 'dumb' })]);
      expect(coloured.output).to.include('\x1b[');
      for (const cli of [noColor, dumb]) {
        expect(cli.output, JSON.stringify(cli.output)).not.to.include('\x1b');
        expect(cli.lines).to.include('✓ #1 calculate: 1+1 = 2');
      }
    });
  });
});
