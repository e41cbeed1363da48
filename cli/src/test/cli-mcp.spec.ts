/**
 * MCP servers in the CLI: the `mcpServers` config (`kosong.json` in the project, the user's
 * `~/.config/kosong/config.json`, `--mcp-config FILE`), `kosong mcp list`, `/tools`, and the model
 * calling a server's tool (`--provider echo`: the prompt is the script the model plays), against
 * `@modelcontextprotocol/server-everything` over stdio.
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { expect } from 'chai';
import { builtinToolset } from '../tools/builtin-tools.js';
import { jsonEvents, killLeftovers, makeWorkspace, readJsonl, runCli, type Workspace } from './cli-harness.js';
import { HAS_SCRIPT, KEY, PtyCli, killPtyLeftovers, stripEscapes } from './pty-harness.js';
import { NO_TERMINAL_ELICITATION_NOTICE } from '../mcp/terminal-elicitation.js';

/** server-everything's entry point (`node <it> stdio`). */
const EVERYTHING = join(dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/package.json')), 'dist', 'index.js');

/** What `/tools` says of the built-in tools: the session's built-in toolset, by name. */
const BUILTIN_LINE = `built-in: ${builtinToolset({ cwd: '.', offerBash: true })
  .tools.map((tool) => tool.name)
  .join(', ')}`;

/** The pids of processes whose command line has `marker` (server-everything ignores arguments after its transport). */
function processesWith(marker: string): number[] {
  try {
    return execFileSync('pgrep', ['-f', marker], { encoding: 'utf8' }).split('\n').filter(Boolean).map(Number);
  } catch (error) {
    if ((error as { status?: number }).status === 1) return []; // none
    throw error;
  }
}

describe('kosong CLI: MCP servers', function () {
  this.timeout(60_000);
  let ws: Workspace;
  /** The user's config directory of these runs (`XDG_CONFIG_HOME`): never the real one. */
  let configHome: string;
  let env: Record<string, string>;
  /** A mark on the command line of this test's server processes. */
  let marker: string;

  const everything = (extra: Record<string, unknown> = {}) => ({ command: process.execPath, args: [EVERYTHING, 'stdio', marker], ...extra });
  const writeConfig = (file: string, config: unknown) => {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, JSON.stringify(config));
    return file;
  };

  beforeEach(() => {
    ws = makeWorkspace();
    configHome = join(ws.base, 'config-home');
    env = { XDG_CONFIG_HOME: configHome };
    marker = `kosong-mcp-test-${randomUUID()}`;
  });
  afterEach(() => {
    killPtyLeftovers();
    killLeftovers();
    for (const pid of processesWith(marker)) process.kill(pid, 'SIGKILL');
    ws.remove();
  });

  it('kosong mcp list: the servers of kosong.json and their tools; no server process is left', async () => {
    writeConfig(join(ws.cwd, 'kosong.json'), { mcpServers: { everything: everything() } });
    const run = await runCli(['mcp', 'list'], ws.cwd, { env });
    expect(run.stderr).to.equal('');
    expect(run.code).to.equal(0);
    const lines = run.stdout.split('\n');
    expect(lines[0]).to.equal(`${join(ws.cwd, 'kosong.json')}: 1 server`);
    expect(lines[1]).to.match(/^everything \(stdio: .*server-everything\/dist\/index\.js stdio kosong-mcp-test-.*\): \d+ tools$/);
    expect(lines).to.include.members(['  everything__echo', '  everything__get-sum', '  everything__get-structured-content']);
    expect(processesWith(marker)).to.deep.equal([]);
  });

  it('--mcp-config FILE wins over kosong.json; without either, the user\'s config/kosong/config.json', async () => {
    writeConfig(join(ws.cwd, 'kosong.json'), { mcpServers: { project: everything() } });
    const other = writeConfig(join(ws.base, 'other.json'), { mcpServers: { flagged: everything() } });
    const flagged = await runCli(['--mcp-config', other, 'mcp', 'list'], ws.cwd, { env });
    expect(flagged.stdout).to.match(/^flagged \(stdio/m).and.not.match(/^project/m);

    const user = writeConfig(join(configHome, 'kosong', 'config.json'), { mcpServers: { mine: everything() } });
    const sub = join(ws.cwd, 'src'); // no kosong.json there
    const fromUser = await runCli(['mcp', 'list'], sub, { env });
    expect(fromUser.code).to.equal(0);
    expect(fromUser.stdout).to.match(new RegExp(`^${user.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: 1 server$`, 'm'));
    expect(fromUser.stdout).to.match(/^mine \(stdio/m);
  });

  it('no config anywhere: mcp list says so (exit 0), and a session runs with the built-in tools only', async () => {
    const list = await runCli(['mcp', 'list'], ws.cwd, { env });
    expect(list.code).to.equal(0);
    expect(list.stdout).to.equal('no MCP servers: none configured (kosong.json in this directory, ~/.config/kosong/config.json, or --mcp-config FILE)\n');
    const chat = await runCli(['chat'], ws.cwd, { env, input: '/tools\n' });
    expect(chat.code).to.equal(0);
    expect(BUILTIN_LINE).to.match(/^built-in: read_file, list_directory, calculate, .*bash$/);
    expect(chat.stdout).to.include(BUILTIN_LINE);
    expect(chat.stdout).to.not.include('mcp server');
  });

  it('the model calls a server\'s tool as <server>__<tool>; the server ends with the run', async () => {
    writeConfig(join(ws.cwd, 'kosong.json'), { mcpServers: { everything: everything() } });
    const script = `tool_call: ${JSON.stringify({ id: 'c1', name: 'everything__echo', arguments: JSON.stringify({ message: 'from the model' }) })}`;
    const run = await runCli(['--provider', 'echo', '--json', '--max-steps', '1', 'run', script], ws.cwd, { env });
    expect(run.stderr).to.equal('');
    const results = jsonEvents(run.stdout).filter((e) => e.type === 'tool_result');
    expect(results).to.have.length(1);
    expect(results[0]!.result).to.deep.include({ toolCallId: 'c1', returnValue: { isError: false, output: [{ type: 'text', text: 'Echo: from the model' }], message: '', display: [] } });
    expect(processesWith(marker)).to.deep.equal([]);
  });

  it('@server:uri in a chat message adds the resource to the message; one that cannot be read sends nothing; @word: of no server is text', async () => {
    writeConfig(join(ws.cwd, 'kosong.json'), { mcpServers: { everything: everything() } });
    const input = ['@everything:demo://resource/nowhere broken', 'summarise @everything:demo://resource/static/document/features.md please', 'text: mail me @someone:home', '/exit', ''].join('\n');
    const chat = await runCli(['--provider', 'echo', '--session', 's.jsonl', 'chat'], ws.cwd, { env, input });
    expect(chat.stdout).to.match(/@everything:demo:\/\/resource\/nowhere: the resource cannot be read \(.*\); nothing was sent/);
    const users = readJsonl(join(ws.cwd, 's.jsonl')).filter((line) => line['role'] === 'user');
    expect(users, 'the unreadable one was not sent').to.have.length(2);
    const parts = users[0]!['content'] as { type: string; text: string }[];
    expect(parts[0]).to.deep.equal({ type: 'text', text: 'summarise @everything:demo://resource/static/document/features.md please' });
    expect(parts[1]!.text).to.match(/^\[Resource demo:\/\/resource\/static\/document\/features\.md \(text\/markdown\)\]\n# Everything Server - Features/);
    expect(JSON.stringify(users[1]!['content'])).to.equal(JSON.stringify('text: mail me @someone:home'));
  });

  it("/prompt sends an MCP prompt's messages, with its arguments; an unknown prompt or a missing argument is said, and nothing is sent", async () => {
    writeConfig(join(ws.cwd, 'kosong.json'), { mcpServers: { everything: everything() } });
    const input = ['/prompt nosuch', '/prompt everything:args-prompt', '/prompt args-prompt city=Lyon state="Auvergne Rhône"', '/exit', ''].join('\n');
    const chat = await runCli(['--provider', 'echo', '--session', 's.jsonl', 'chat'], ws.cwd, { env, input });
    expect(chat.stdout).to.include('/prompt: no MCP server of the session has a prompt "nosuch"');
    expect(chat.stdout).to.match(/\/prompt everything:args-prompt: .*city/);
    const users = readJsonl(join(ws.cwd, 's.jsonl')).filter((line) => line['role'] === 'user');
    expect(users).to.have.length(1);
    expect(JSON.stringify(users[0]!['content'])).to.include('Lyon').and.include('Auvergne Rhône');
  });

  it('/tools in the chat: the built-in tools, then each server\'s', async () => {
    writeConfig(join(ws.cwd, 'kosong.json'), { mcpServers: { everything: everything(), again: everything() } });
    const chat = await runCli(['chat'], ws.cwd, { env, input: '/tools\n/exit\n' });
    expect(chat.stderr).to.equal('');
    expect(chat.code).to.equal(0);
    const lines = chat.stdout.split('\n');
    const builtin = lines.indexOf(BUILTIN_LINE);
    const first = lines.findIndex((line) => /^mcp server everything \(\d+ tools\):$/.test(line));
    const second = lines.findIndex((line) => /^mcp server again \(\d+ tools\):$/.test(line));
    expect(builtin, chat.stdout).to.be.greaterThan(-1);
    expect(first).to.be.greaterThan(builtin);
    expect(second).to.be.greaterThan(first);
    expect(lines.slice(first, second)).to.include.members(['  everything__echo', '  everything__get-roots-list']);
    expect(lines.slice(second)).to.include('  again__echo');
  });

  it("a server's elicitation is asked on the terminal, field by field (checked, defaults on Enter), and the answers reach the server", async function () {
    if (!HAS_SCRIPT) this.skip(); // no util-linux `script` to make a pseudo-terminal with
    writeConfig(join(ws.cwd, 'kosong.json'), { mcpServers: { everything: everything() } });
    const script = `tool_call: ${JSON.stringify({ id: 'e1', name: 'everything__trigger-elicitation-request', arguments: '{}' })}`;
    const cli = new PtyCli(['--provider', 'echo', '--max-steps', '1', '--session', 's.jsonl', 'run', script], ws.cwd, { env, columns: 200 });
    await cli.waitFor('Answer it? [y]es / [n]o (decline) / [c]ancel', { timeoutMs: 20_000 });
    expect(stripEscapes(cli.output)).to.include('MCP server everything asks: Please provide inputs for the following fields:');
    cli.type(`y${KEY.enter}`);
    await cli.waitFor('String (Your full, legal name) [text]: ');
    cli.type(`Ada Lovelace${KEY.enter}`);
    await cli.waitFor('Boolean (Agree to the terms and conditions) [y/n, Enter to leave it out]: ');
    cli.type(`maybe${KEY.enter}`);
    await cli.waitFor('answer y or n; Boolean again: ');
    cli.type(`y${KEY.enter}`);
    await cli.waitFor('String with default');
    cli.type(KEY.enter); // its default
    await cli.waitFor('String with email format');
    cli.type(`not-an-email${KEY.enter}`);
    await cli.waitFor('not an email address; String with email format again: ');
    cli.type(`ada@example.org${KEY.enter}`);
    await cli.waitFor('String with uri format');
    cli.type(KEY.enter); // optional: left out
    await cli.waitFor('String with date format');
    cli.type(KEY.enter);
    await cli.waitFor('Integer (');
    cli.type(`500${KEY.enter}`);
    await cli.waitFor('out of range from 1 to 100; Integer again: ');
    cli.type(`7${KEY.enter}`);
    // The rest take their defaults.
    for (const field of ['Number in range', 'Untitled Single Select Enum', 'Untitled Multiple Select Enum', 'Titled Single Select Enum', 'Titled Multiple Select Enum', 'Legacy Titled']) {
      await cli.waitFor(field);
      cli.type(KEY.enter);
    }
    expect(await cli.waitForExit(20_000)).to.equal(3);
    const result = JSON.stringify(readJsonl(join(ws.cwd, 's.jsonl')).find((line) => line['role'] === 'tool'));
    expect(result).to.include('User provided the requested information').and.include('Name: Ada Lovelace').and.include('Agreed to terms: true');
    expect(result).to.include('Email: ada@example.org').and.include('Favorite Integer: 7');
  });

  it("without a terminal a server's elicitation is declined, and the user told once", async () => {
    writeConfig(join(ws.cwd, 'kosong.json'), { mcpServers: { everything: everything() } });
    const script = `tool_call: ${JSON.stringify({ id: 'e1', name: 'everything__trigger-elicitation-request', arguments: '{}' })}`;
    const run = await runCli(['--provider', 'echo', '--max-steps', '1', '--json', 'run', script], ws.cwd, { env });
    expect(run.code, run.stderr).to.equal(3);
    const events = jsonEvents(run.stdout);
    expect(events.filter((e) => e.type === 'info' && e.message === NO_TERMINAL_ELICITATION_NOTICE)).to.have.length(1);
    expect(JSON.stringify(events.find((e) => e.type === 'tool_result'))).to.include('User declined to provide the requested information');
  });

  it('unknown keys are a setup error naming the key (exit 2), at the top and in a server; nothing is started', async () => {
    writeConfig(join(ws.cwd, 'kosong.json'), { mcpServers: { everything: everything({ argz: [] }) } });
    const inServer = await runCli(['mcp', 'list'], ws.cwd, { env });
    expect(inServer.code).to.equal(2);
    expect(inServer.stderr).to.include(`${join(ws.cwd, 'kosong.json')}: mcpServers.everything: unknown key "argz" (the keys of a stdio server: type, command, args, env, cwd)`);

    writeConfig(join(ws.cwd, 'kosong.json'), { mcpServers: {}, mcpServer: {} });
    const top = await runCli(['run', 'hello'], ws.cwd, { env });
    expect(top.code).to.equal(2);
    expect(top.stderr).to.include('kosong.json: unknown key "mcpServer" (its keys: mcpServers)');

    writeConfig(join(ws.cwd, 'kosong.json'), { mcpServers: { remote: { url: 'http://127.0.0.1:1/mcp', header: {} } } });
    const http = await runCli(['run', 'hello'], ws.cwd, { env });
    expect(http.code).to.equal(2);
    expect(http.stderr).to.include('mcpServers.remote: unknown key "header" (the keys of a http server: type, url, headers)');

    writeFileSync(join(ws.cwd, 'kosong.json'), '{ not json');
    const broken = await runCli(['mcp', 'list'], ws.cwd, { env });
    expect(broken.code).to.equal(2);
    expect(broken.stderr).to.match(/kosong\.json: not JSON: /);

    const missing = await runCli(['--mcp-config', 'nope.json', 'mcp', 'list'], ws.cwd, { env });
    expect(missing.code).to.equal(2);
    expect(missing.stderr).to.include(`${join(ws.cwd, 'nope.json')}: cannot be read: ENOENT`);
    expect(processesWith(marker)).to.deep.equal([]);
  });

  it('a server that cannot start: a session is a setup error naming it (exit 2); mcp list says it and lists the others (exit 1)', async () => {
    writeConfig(join(ws.cwd, 'kosong.json'), { mcpServers: { ghost: { command: 'kosong-no-such-mcp-server' }, everything: everything() } });
    const run = await runCli(['run', 'hello'], ws.cwd, { env });
    expect(run.code).to.equal(2);
    expect(run.stderr).to.match(/MCP server "ghost": cannot connect: .*ENOENT/);
    expect(processesWith(marker), 'the other server was closed again').to.deep.equal([]);

    const list = await runCli(['mcp', 'list'], ws.cwd, { env });
    expect(list.code).to.equal(1);
    expect(list.stdout).to.match(/^ghost \(stdio: kosong-no-such-mcp-server\): MCP server "ghost": cannot connect: .*ENOENT/m);
    expect(list.stdout).to.include('  everything__echo');
  });

  it('--mcp-config with --redis, or for kosong worker, is refused (the worker has the tools)', async () => {
    const run = await runCli(['--redis', 'redis://127.0.0.1:1', '--mcp-config', 'kosong.json', 'run', 'hello'], ws.cwd, { env });
    expect(run.code).to.equal(2);
    expect(run.stderr).to.include('--mcp-config is not supported with --redis');
    const worker = await runCli(['--redis', 'redis://127.0.0.1:1', '--mcp-config', 'kosong.json', 'worker'], ws.cwd, { env });
    expect(worker.code).to.equal(2);
    expect(worker.stderr).to.include('kosong worker: --mcp-config is not supported by the worker');
  });
});
