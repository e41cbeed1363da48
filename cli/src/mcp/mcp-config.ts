/**
 * The CLI's MCP servers, from a config file in the widely used `mcpServers` JSON shape.
 *
 * @module
 */
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import type { McpServerConfig } from '@kosong/toolset-mcp';

/** A config file that cannot be used: unreadable, not JSON, or with a key or value it does not know (a setup error). */
export class McpConfigError extends Error {
  constructor(
    /** The file. */
    readonly file: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(`${file}: ${message}`, options);
    this.name = 'McpConfigError';
  }
}

/** One server of the config: its name (the key) and how to reach it. */
export interface CliMcpServer {
  readonly name: string;
  readonly server: McpServerConfig;
}

/** The servers of a config file, in its order, and the file they came from. */
export interface CliMcpConfig {
  /** The file read, or `undefined` when there is none (no servers then). */
  readonly file: string | undefined;
  readonly servers: readonly CliMcpServer[];
}

/** The keys of a server entry, by its type (a server without `type`: `command` → stdio, `url` → http). */
const SERVER_KEYS: Readonly<Record<McpServerConfig['type'], readonly string[]>> = {
  stdio: ['type', 'command', 'args', 'env', 'cwd'],
  http: ['type', 'url', 'headers'],
  sse: ['type', 'url', 'headers'],
};

/** Names the model can see in a tool name (`<server>__<tool>`). */
const SERVER_NAME = /^[A-Za-z0-9_-]{1,32}$/;

/**
 * Which config file applies: `--mcp-config FILE` (which must exist), else `kosong.json` in the
 * project (working) directory, else `~/.config/kosong/config.json` (`$XDG_CONFIG_HOME/kosong/config.json`
 * when that is set); `undefined` when none exists. The first found is used whole (they are not merged).
 */
export function mcpConfigFile(flag: string | undefined, cwd: string, env: Readonly<Record<string, string | undefined>> = process.env): string | undefined {
  if (flag !== undefined) return resolve(cwd, flag);
  const project = join(cwd, 'kosong.json');
  if (existsSync(project)) return project;
  const configHome = env.XDG_CONFIG_HOME !== undefined && env.XDG_CONFIG_HOME !== '' ? env.XDG_CONFIG_HOME : join(env.HOME ?? homedir(), '.config');
  const user = join(configHome, 'kosong', 'config.json');
  return existsSync(user) ? user : undefined;
}

/**
 * Reads and checks the config: `{ "mcpServers": { "<name>": { "command", "args"?, "env"?, "cwd"? } |
 * { "type": "http" | "sse", "url", "headers"? } } }` (`"type": "stdio"` may be given; `"streamable-http"`
 * is taken for `"http"`). A stdio server's relative `cwd` is taken from the file's directory.
 *
 * @throws {McpConfigError} for a file that cannot be read or is not JSON, an unknown key (at the top
 *   or in a server: named), a value of the wrong kind, a server name a tool name cannot carry.
 */
export function readMcpConfig(file: string | undefined): CliMcpConfig {
  if (file === undefined) return { file: undefined, servers: [] };
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new McpConfigError(file, `cannot be read: ${(error as Error).message}`, { cause: error });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new McpConfigError(file, `not JSON: ${(error as Error).message}`, { cause: error });
  }
  if (!isObject(json)) throw new McpConfigError(file, 'must be a JSON object ({ "mcpServers": { … } })');
  for (const key of Object.keys(json)) if (key !== 'mcpServers') throw new McpConfigError(file, `unknown key "${key}" (its keys: mcpServers)`);
  const servers = json.mcpServers ?? {};
  if (!isObject(servers)) throw new McpConfigError(file, '"mcpServers" must be an object of servers by name');
  return { file, servers: Object.entries(servers).map(([name, entry]) => ({ name, server: serverOf(file, name, entry) })) };
}

function serverOf(file: string, name: string, entry: unknown): McpServerConfig {
  const where = `mcpServers.${name}`;
  if (!SERVER_NAME.test(name)) throw new McpConfigError(file, `${where}: a server name is 1 to 32 letters, digits, _ or - (it starts the names of its tools)`);
  if (!isObject(entry)) throw new McpConfigError(file, `${where}: must be an object ({ "command": … } or { "url": … })`);
  const type = typeOf(file, where, entry);
  for (const key of Object.keys(entry)) {
    if (!SERVER_KEYS[type].includes(key)) throw new McpConfigError(file, `${where}: unknown key "${key}" (the keys of a ${type} server: ${SERVER_KEYS[type].join(', ')})`);
  }
  const string = (key: string): string => {
    const value = entry[key];
    if (typeof value !== 'string' || value === '') throw new McpConfigError(file, `${where}.${key} must be a non-empty string`);
    return value;
  };
  const strings = (key: string): Readonly<Record<string, string>> | undefined => {
    const value = entry[key];
    if (value === undefined) return undefined;
    if (!isObject(value) || Object.values(value).some((v) => typeof v !== 'string')) throw new McpConfigError(file, `${where}.${key} must be an object of strings`);
    return value as Record<string, string>;
  };
  if (type === 'stdio') {
    const args = entry.args;
    if (args !== undefined && (!Array.isArray(args) || args.some((a) => typeof a !== 'string'))) throw new McpConfigError(file, `${where}.args must be a list of strings`);
    const env = strings('env');
    return {
      type: 'stdio',
      command: string('command'),
      ...(args === undefined ? {} : { args: args as string[] }),
      ...(env === undefined ? {} : { env }),
      ...(entry.cwd === undefined ? {} : { cwd: resolve(join(file, '..'), string('cwd')) }),
    };
  }
  const url = string('url');
  try {
    new URL(url);
  } catch {
    throw new McpConfigError(file, `${where}.url is not a URL: ${JSON.stringify(url)}`);
  }
  const headers = strings('headers');
  return { type, url, ...(headers === undefined ? {} : { headers }) };
}

function typeOf(file: string, where: string, entry: Readonly<Record<string, unknown>>): McpServerConfig['type'] {
  const { type } = entry;
  if (type === undefined) {
    if (entry.command !== undefined) return 'stdio';
    if (entry.url !== undefined) return 'http';
    throw new McpConfigError(file, `${where}: give "command" (a stdio server) or "url" (an HTTP server)`);
  }
  if (type === 'stdio' || type === 'http' || type === 'sse') return type;
  if (type === 'streamable-http' || type === 'streamableHttp') return 'http';
  throw new McpConfigError(file, `${where}.type must be "stdio", "http" or "sse", not ${JSON.stringify(type)}`);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
