/**
 * Helpers of the MCP tests: the fixture server (stdio and HTTP), tool calls, waiting, and making
 * sure no process outlives the tests.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { toolCall, type ContentPart, type ToolResult, type ToolReturnValue, type Toolset } from '@kosong/core';
import type { McpHttpServerConfig, McpStdioServerConfig } from '../index.js';

/** The compiled fixture server. */
export const FIXTURE = fileURLToPath(new URL('./fixtures/server.js', import.meta.url));

/**
 * The entry point of `@modelcontextprotocol/server-everything` (the reference server that exercises
 * the whole protocol), run with `node <it> stdio` or `node <it> streamableHttp` (port from `PORT`).
 */
export const EVERYTHING = join(dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/package.json')), 'dist', 'index.js');

/** server-everything over stdio (its stderr, a log of every request, ignored). */
export function everythingStdio(): McpStdioServerConfig {
  return { type: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'], stderr: 'ignore' };
}

/** A TCP port free on 127.0.0.1 now (server-everything takes its port from `PORT` and cannot report an ephemeral one). */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

/** Starts server-everything over streamable HTTP on `port` (default: a free one) and waits until it listens. */
export async function startEverythingHttp(port?: number): Promise<HttpFixture> {
  return startEverything('streamableHttp', port);
}

/**
 * Starts server-everything over the legacy HTTP+SSE transport (`GET /sse`, `POST /message`) on
 * `port` (default: a free one) and waits until it listens; `log` gets each line of its request log.
 * Its `config` is the streamable HTTP config of `/sse` (which it refuses with 404: the fallback's case).
 */
export async function startEverythingSse(port?: number, log?: (line: string) => void): Promise<HttpFixture> {
  return startEverything('sse', port, log);
}

async function startEverything(transport: 'streamableHttp' | 'sse', port?: number, log?: (line: string) => void): Promise<HttpFixture> {
  port ??= await freePort();
  const child = spawn(process.execPath, [EVERYTHING, transport], { stdio: ['ignore', 'ignore', 'pipe'], env: { PATH: process.env['PATH'] ?? '', PORT: String(port) } });
  children.add(child);
  trackPid(child.pid!);
  const lines = createInterface({ input: child.stderr! });
  await Promise.race([
    // the listener stays: it drains the request log server-everything writes to stderr
    new Promise<void>((resolve) =>
      lines.on('line', (line) => {
        log?.(line);
        if (line.includes(`listening on port ${port}`) || line.includes(`running on port ${port}`)) resolve();
      }),
    ),
    once(child, 'exit').then(([code]) => Promise.reject(new Error(`server-everything exited with ${String(code)}`))),
  ]);
  return {
    port,
    pid: child.pid!,
    config: { type: 'http', url: `http://127.0.0.1:${port}/${transport === 'sse' ? 'sse' : 'mcp'}` },
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGKILL');
      await exited;
    },
  };
}

/** The fixture over stdio. */
export function stdioServer(): McpStdioServerConfig {
  return { type: 'stdio', command: process.execPath, args: [FIXTURE, 'stdio'] };
}

/** Every pid a test saw (fixture processes); killed after the tests if still alive. */
const pids = new Set<number>();
/** HTTP fixture processes started by the tests. */
const children = new Set<ChildProcess>();

/** Remembers a pid so {@link killLeftovers} kills it if it is still alive. */
export function trackPid(pid: number): number {
  pids.add(pid);
  return pid;
}

/** Whether a process is alive (signal 0 probes without signalling). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The fixture processes that are children of this process now (found with `ps`, so processes the
 * SDK spawned count too, whether or not a test saw their pid).
 */
export function fixtureChildren(): number[] {
  let listing: string;
  try {
    listing = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(process.pid)], { encoding: 'utf8' });
  } catch (error) {
    // ps exits with 1 when there is no child at all
    if ((error as { status?: number }).status === 1) return [];
    throw error;
  }
  return listing
    .split('\n')
    .filter((line) => line.includes(FIXTURE) || line.includes(EVERYTHING))
    .map((line) => Number.parseInt(line.trim(), 10));
}

/**
 * Kills (SIGKILL) every fixture process still alive: tracked ones and children found by
 * {@link fixtureChildren}. Returns their pids (a passing run leaves none).
 */
export function killLeftovers(): number[] {
  const alive: number[] = [];
  for (const pid of fixtureChildren()) pids.add(pid);
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) {
      alive.push(child.pid!);
      child.kill('SIGKILL');
    }
  }
  children.clear();
  for (const pid of pids) {
    if (isAlive(pid)) {
      alive.push(pid);
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    }
  }
  pids.clear();
  return alive;
}

/** The fixture serving streamable HTTP on 127.0.0.1, in a child process. */
export interface HttpFixture {
  readonly port: number;
  readonly pid: number;
  readonly config: McpHttpServerConfig;
  /** Kills the process with SIGKILL and waits until it is gone. */
  kill(): Promise<void>;
}

/** Starts the HTTP fixture on `port` (0: an ephemeral port) and waits until it listens. */
export async function startHttpFixture(port = 0): Promise<HttpFixture> {
  const child = spawn(process.execPath, [FIXTURE, 'http', String(port)], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.add(child);
  trackPid(child.pid!);
  const lines = createInterface({ input: child.stdout! });
  const [line] = (await Promise.race([
    once(lines, 'line'),
    once(child, 'exit').then(([code]) => Promise.reject(new Error(`the HTTP fixture exited with ${String(code)}`))),
  ])) as [string];
  lines.close();
  const actual = (JSON.parse(line) as { port: number }).port;
  return {
    port: actual,
    pid: child.pid!,
    config: { type: 'http', url: `http://127.0.0.1:${actual}/mcp` },
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGKILL');
      await exited;
    },
  };
}

let nextId = 0;

/** Calls a tool through a toolset; `args` is JSON-encoded unless it is a string (or null). */
export async function callTool(toolset: Toolset, name: string, args: unknown = {}, signal: AbortSignal = new AbortController().signal): Promise<ToolResult> {
  const call = toolCall(`call-${++nextId}`, name, typeof args === 'string' || args === null ? (args as string | null) : JSON.stringify(args));
  return toolset.handle(call, { signal, toolCall: call, stepId: 'test-step' });
}

/** The text of a return value's output (its text parts, joined). */
export function textOf(value: ToolReturnValue): string {
  if (typeof value.output === 'string') return value.output;
  return value.output.map((part: ContentPart) => (part.type === 'text' ? part.text : '')).join('');
}

/** What the fixture observed (its `stats` tool). */
export interface FixtureStats {
  readonly pid: number;
  readonly running: number;
  readonly cancelled: readonly { readonly requestId: string | number; readonly reason: string }[];
  readonly sessionsOpened: number;
  readonly sessionsClosed: number;
  readonly started: { readonly echo: number; readonly slow: number; readonly read_slowly: number };
}

/** Asks the fixture behind a toolset what it observed (its `stats` tool, maybe prefixed); tracks its pid. */
export async function statsOf(toolset: Toolset, toolName = 'stats'): Promise<FixtureStats> {
  const result = await callTool(toolset, toolName);
  if (result.returnValue.isError) throw new Error(`stats failed: ${result.returnValue.message}`);
  const stats = JSON.parse(textOf(result.returnValue)) as FixtureStats;
  trackPid(stats.pid);
  return stats;
}

/** Polls `check` until it returns something other than `undefined`/`false`; fails after `timeoutMs`. */
export async function waitFor<T>(what: string, check: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 3000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
