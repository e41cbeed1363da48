/**
 * Saved sessions (issue 27): `kosong chat` keeps each conversation in the sessions directory,
 * `kosong sessions` lists them, `--continue` and `--resume <id>` go on with one, showing the
 * conversation so far first. Each test has a `KOSONG_HOME` of its own.
 */
import { expect } from 'chai';
import { mkdirSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { killLeftovers, makeWorkspace, readJsonl, runCli, type Workspace } from './cli-harness.js';
import { HAS_SCRIPT, KEY, PtyCli, killPtyLeftovers, stripEscapes } from './pty-harness.js';

describe('kosong CLI: saved sessions (kosong sessions, --continue, --resume)', function () {
  this.timeout(30_000);
  let ws: Workspace;
  let env: { KOSONG_HOME: string };
  const sessionsDir = (): string => join(env.KOSONG_HOME, 'sessions');
  const saved = (): string[] => readdirSync(sessionsDir()).filter((name) => name.endsWith('.jsonl'));

  beforeEach(() => {
    ws = makeWorkspace();
    env = { KOSONG_HOME: join(ws.base, 'home') };
  });
  afterEach(() => {
    killPtyLeftovers();
    killLeftovers();
    ws.remove();
  });

  it('chat saves each session; kosong sessions lists it; run keeps none', async () => {
    const chat = await runCli(['--provider', 'echo', 'chat'], ws.cwd, { input: 'text: hello there\ntext: second\n', env });
    expect(chat.code, chat.stderr).to.equal(0);
    expect(saved()).to.have.length(1);
    expect(saved()[0]).to.match(/^\d{8}-\d{6}-[0-9a-f]{6}\.jsonl$/);
    const messages = readJsonl(join(sessionsDir(), saved()[0]!));
    expect(messages.filter((m) => m['role'] === 'user')).to.have.length(2);
    const run = await runCli(['--provider', 'echo', 'run', 'text: once'], ws.cwd, { env });
    expect(run.code).to.equal(0);
    expect(saved(), 'run keeps no session of its own').to.have.length(1);
    const list = await runCli(['sessions'], ws.cwd, { env });
    expect(list.code, list.stderr).to.equal(0);
    const [header, row] = list.stdout.trimEnd().split('\n');
    expect(header).to.match(/^ID\s+LAST CHANGE \(UTC\)\s+TURNS\s+TOKENS\s+FIRST PROMPT$/);
    expect(row).to.match(new RegExp(`^${saved()[0]!.replace('.jsonl', '')}\\s+\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d\\s+2\\s+~\\d+\\s+text: hello there$`));
    const json = await runCli(['--json', 'sessions'], ws.cwd, { env });
    expect(JSON.parse(json.stdout.split('\n')[0]!)).to.deep.include({ id: saved()[0]!.replace('.jsonl', ''), turns: 2, firstPrompt: 'text: hello there' });
  });

  it('--continue goes on with the newest session, --resume <id or its start> with that one, each shown first', async () => {
    await runCli(['--provider', 'echo', 'chat'], ws.cwd, { input: 'text: first session\n', env });
    await new Promise((resolve) => setTimeout(resolve, 20)); // a later modification time
    await runCli(['--provider', 'echo', 'chat'], ws.cwd, { input: 'text: second session\n', env });
    // By when they were written (two ids of the same second sort by their random part).
    const [older, newer] = saved().sort((a, b) => statSync(join(sessionsDir(), a)).mtimeMs - statSync(join(sessionsDir(), b)).mtimeMs);
    const cont = await runCli(['--provider', 'echo', '--continue', 'run', 'text: more'], ws.cwd, { env });
    expect(cont.code, cont.stderr).to.equal(0);
    expect(cont.stdout).to.include('> text: second session\nsecond session\n');
    expect(readJsonl(join(sessionsDir(), newer!)).filter((m) => m['role'] === 'user')).to.have.length(2);
    const id = older!.replace('.jsonl', '');
    const resume = await runCli(['--provider', 'echo', '--resume', id.slice(0, -2), 'run', 'text: again'], ws.cwd, { env });
    expect(resume.code, resume.stderr).to.equal(0);
    expect(resume.stdout).to.include('> text: first session\nfirst session\n');
    expect(readJsonl(join(sessionsDir(), older!)).filter((m) => m['role'] === 'user')).to.have.length(2);
    expect(saved(), 'no new session').to.have.length(2);
  });

  it('refuses what cannot be: no session, an unknown or ambiguous id, a path for an id, --session with --continue, --continue with --resume', async () => {
    const none = await runCli(['--provider', 'echo', '--continue', 'run', 'text: x'], ws.cwd, { env });
    expect(none.code).to.equal(2);
    expect(none.stderr).to.match(/there is no saved session to continue/);
    mkdirSync(sessionsDir(), { recursive: true });
    writeFileSync(join(sessionsDir(), '20261202-100000-aaaaaa.jsonl'), '');
    writeFileSync(join(sessionsDir(), '20261202-100000-aaaabb.jsonl'), '');
    const cases: [string[], RegExp][] = [
      [['--resume', 'nope'], /no saved session "nope"/],
      [['--resume', '20261202-100000-aaaa'], /is the start of 2 sessions/],
      [['--resume', '../x'], /is not a session id/],
      [['--continue', '--session', 's.jsonl'], /--session names a file; --continue and --resume choose a saved session/],
      [['--continue', '--resume', '20261202'], /--continue and --resume: give one/],
    ];
    for (const [flags, expected] of cases) {
      const run = await runCli(['--provider', 'echo', ...flags, 'run', 'text: x'], ws.cwd, { env });
      expect(run.code, flags.join(' ')).to.equal(2);
      expect(run.stderr, flags.join(' ')).to.match(expected);
    }
    const relative = await runCli(['sessions'], ws.cwd, { env: { KOSONG_HOME: 'rel/home' } });
    expect(relative.code).to.equal(2);
    expect(relative.stderr).to.match(/KOSONG_HOME must be an absolute path/);
  });

  it('lists neither links nor what is not a session as sessions: a corrupted file is named as unreadable', async () => {
    mkdirSync(sessionsDir(), { recursive: true });
    writeFileSync(join(sessionsDir(), '20261202-100000-bad000.jsonl'), 'not json at all\nmore\n');
    symlinkSync(ws.outsideFile, join(sessionsDir(), '20261202-100000-link00.jsonl'));
    const list = await runCli(['sessions'], ws.cwd, { env });
    expect(list.code, list.stderr).to.equal(0);
    expect(list.stdout).to.match(/^20261202-100000-bad000: cannot be read \(.*line 1/m);
    expect(list.stdout).to.not.include('link00');
    expect(list.stdout).to.not.include(ws.secret);
  });

  it('on a terminal, chat says at the end how to go on with the session', async function () {
    if (!HAS_SCRIPT) this.skip(); // no util-linux `script` to make a pseudo-terminal with
    const cli = new PtyCli(['--provider', 'echo', 'chat'], ws.cwd, { env });
    await cli.waitFor('› ');
    cli.type(`text: hi${KEY.enter}`);
    await cli.waitFor('— 1 step');
    cli.type('/exit' + KEY.enter);
    await cli.waitForExit();
    const id = saved()[0]!.replace('.jsonl', '');
    const screen = stripEscapes(cli.output).replace(/\r?\n/g, ' ').replace(/\s+/g, ' ');
    expect(screen).to.include(`session saved: ${id} (kosong --resume ${id} goes on with it`);
  });
});
