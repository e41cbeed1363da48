/**
 * `kosong serve`: the chat over HTTP for browsers — the AI SDK's UI message stream (`useChat`),
 * per tenant, and the web page — on `@kosong/server`. The offline demo model by default, so
 * `npx kosong serve` and opening the page works with no key.
 *
 * Only commander's types are imported here: the server, Fastify and the kernel load when the
 * command runs (`kosong --help` loads none of them).
 *
 * @module
 */
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';

import type * as ServerModuleNamespace from '@kosong/server';
import type { ChatSessions } from '@kosong/server';
import type { FastifyInstance } from 'fastify';
import type * as IoRedis from 'ioredis';

import type { GlobalOptions } from './cli-options.js';

type ServerModule = typeof ServerModuleNamespace;

/** The tenant of every request when no API key is configured: only requests of this machine are served. */
export const LOCAL_TENANT = 'local';

/** The options of `kosong serve` itself. */
export interface ServeCommandOptions {
  readonly port?: number;
  readonly host?: string;
  readonly config?: string;
  readonly apiKeyFile?: string;
}

/** What `--config <file>` may hold (JSON): each field as its flag, and what has no flag. */
export interface ServeConfig {
  readonly port?: number;
  readonly host?: string;
  readonly redis?: string;
  readonly apiKeyFile?: string;
  /** Where the chats are kept without Redis (default `$KOSONG_HOME/serve/sessions`). */
  readonly sessionsDir?: string;
  readonly systemPrompt?: string;
  readonly maxSteps?: number;
  /** API keys, as their SHA-256 (hex) and tenant, like `--api-key-file`'s lines. */
  readonly keys?: readonly { readonly sha256: string; readonly tenant: string }[];
  /** Per tenant: its limits (`TenantLimits` of `@kosong/core/kernel`: pacing, caps, budget). */
  readonly tenants?: Readonly<Record<string, { readonly limits?: Readonly<Record<string, unknown>> }>>;
}

const CONFIG_KEYS: ReadonlySet<string> = new Set(['port', 'host', 'redis', 'apiKeyFile', 'sessionsDir', 'systemPrompt', 'maxSteps', 'keys', 'tenants']);

/** The default port. */
const DEFAULT_PORT = 3000;

/**
 * Registers `kosong serve` on the program. `globalOptions` gives the global options (provider,
 * `--redis`, `--system`, `--max-steps`, `--allow-bash`) when the command runs.
 */
export function registerServeCommand(program: Command, globalOptions: () => GlobalOptions): void {
  program
    .command('serve')
    .description(
      'serve the chat over HTTP until Ctrl-C: the AI SDK UI message stream (useChat) per tenant and a web page; the offline demo model by default',
    )
    .option('--port <n>', `the port (0: any free one; default ${DEFAULT_PORT})`, port)
    .option('--host <address>', 'the address to listen on (default 127.0.0.1; another needs API keys)')
    .option('--config <file>', 'a JSON file: port, host, redis, apiKeyFile, sessionsDir, systemPrompt, maxSteps, keys, tenants (their limits)')
    .option('--api-key-file <file>', 'API keys, one "<tenant> <sha256 of the key>" a line (printf %s "$KEY" | sha256sum); without keys only this machine is served')
    .addHelpText('after', '\nThe global --redis <url> keeps the chats and the running turns in Redis (several kosong serve behind one address).')
    .action((options: ServeCommandOptions) => runServe(globalOptions(), options));
}

function port(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError('expected a port, 0 to 65535');
  return n;
}

/** Reads and checks a `--config` file's JSON: an object of known keys with values of the right types. @throws Error saying what is wrong. */
export function parseServeConfig(text: string, file: string): ServeConfig {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new Error(`--config ${file}: not JSON: ${(error as Error).message}`, { cause: error });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error(`--config ${file}: must be a JSON object`);
  const config = value as Record<string, unknown>;
  for (const key of Object.keys(config)) if (!CONFIG_KEYS.has(key)) throw new Error(`--config ${file}: unknown key "${key}" (known: ${[...CONFIG_KEYS].join(', ')})`);
  const expect = (key: string, ok: (v: unknown) => boolean, what: string): void => {
    if (config[key] !== undefined && !ok(config[key])) throw new Error(`--config ${file}: ${key} must be ${what}`);
  };
  const isString = (v: unknown): boolean => typeof v === 'string' && v !== '';
  expect('port', (v) => Number.isInteger(v) && (v as number) >= 0 && (v as number) <= 65535, 'a port, 0 to 65535');
  expect('maxSteps', (v) => Number.isInteger(v) && (v as number) >= 1, 'a positive integer');
  for (const key of ['host', 'redis', 'apiKeyFile', 'sessionsDir', 'systemPrompt']) expect(key, isString, 'a non-empty string');
  /** An object of exactly these keys (`required` among them): a misspelt key is refused, never ignored. */
  const isRecordOf = (v: unknown, keys: readonly string[], required: readonly string[]): boolean =>
    typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).every((k) => keys.includes(k)) && required.every((k) => k in v);
  expect('keys', (v) => Array.isArray(v) && v.every((k) => isRecordOf(k, ['sha256', 'tenant'], ['sha256', 'tenant']) && isString((k as { sha256?: unknown }).sha256) && isString((k as { tenant?: unknown }).tenant)), 'an array of { "sha256", "tenant" }');
  expect('tenants', (v) => typeof v === 'object' && v !== null && !Array.isArray(v) && Object.values(v).every((t) => isRecordOf(t, ['limits'], [])), 'an object of tenants ({ "<id>": { "limits": {…} } }, no other key)');
  return config as ServeConfig;
}

/** The keys of an `--api-key-file`: a `<tenant> <sha256 hex>` line each (blank lines and `#` comments skipped). @throws Error naming the bad line. */
export function parseApiKeyFile(text: string, file: string): { sha256: string; tenant: string }[] {
  const keys: { sha256: string; tenant: string }[] = [];
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const match = /^(\S+)\s+([0-9a-fA-F]{64})$/.exec(line);
    if (!match) throw new Error(`--api-key-file ${file}, line ${index + 1}: expected "<tenant> <sha256 of the key, 64 hex digits>" (the key itself is never stored: printf %s "$KEY" | sha256sum)`);
    keys.push({ tenant: match[1]!, sha256: match[2]!.toLowerCase() });
  });
  if (keys.length === 0) throw new Error(`--api-key-file ${file}: no key in it`);
  return keys;
}

/** Whether `host` is an address of this machine only. */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/**
 * Runs `kosong serve` until SIGINT or SIGTERM: reads the config and the keys, builds the kernel
 * (the chosen provider, the built-in tools of the working directory — bash only with approval,
 * unless `--allow-bash`), serves the chat and the page, prints the URL. `--max-tokens`,
 * `--temperature`, `--timeout` and `--tool-timeout` reach every turn; `--json` and `--session` are
 * refused. A setup error exits 2.
 */
export async function runServe(global: GlobalOptions, options: ServeCommandOptions): Promise<void> {
  const [{ readFile }, { join }, { fail }, { chosenProvider }, cliOptions, { timeoutBudgets }] = await Promise.all([
    import('node:fs/promises'),
    import('node:path'),
    import('./setup-failure.js'),
    import('./provider-catalog.js'),
    import('./cli-options.js'),
    import('./timeout-flags.js'),
  ]);
  // What serve cannot honour is refused, never ignored: its output is a log, its chats are named by their requests.
  const refused = (
    [
      ['json', '--json'],
      ['session', '--session'],
      ['continue', '--continue'],
      ['resume', '--resume'],
      ['mcpConfig', '--mcp-config'],
    ] as const
  ).filter(([key]) => global[key] !== undefined).map(([, flag]) => flag);
  if (refused.length > 0) fail(`kosong serve: ${refused.join(' and ')} ${refused.length === 1 ? 'is' : 'are'} not supported (each request names its chat)`);
  const readText = async (file: string, what: string): Promise<string> => {
    try {
      return await readFile(file, 'utf8');
    } catch (error) {
      return fail(`${what} ${file}: ${(error as Error).message}`);
    }
  };
  let config: ServeConfig = {};
  try {
    if (options.config !== undefined) config = parseServeConfig(await readText(options.config, '--config'), options.config);
  } catch (error) {
    fail((error as Error).message);
  }
  const host = options.host ?? config.host ?? '127.0.0.1';
  const listenPort = options.port ?? config.port ?? DEFAULT_PORT;
  const redisUrl = global.redis ?? config.redis;
  const keyFile = options.apiKeyFile ?? config.apiKeyFile;
  const keys = [...(config.keys ?? [])];
  try {
    if (keyFile !== undefined) keys.push(...parseApiKeyFile(await readText(keyFile, '--api-key-file'), keyFile));
  } catch (error) {
    fail((error as Error).message);
  }
  if (keys.length === 0 && !isLoopback(host)) fail(`serve: --host ${host} needs API keys (--api-key-file, or keys in --config): without keys only this machine (127.0.0.1) is served`);

  const provider = await chosenProvider(global.provider, fail);
  let env: Readonly<Record<string, string | undefined>>;
  try {
    env = cliOptions.providerEnvironment(provider.name, process.env, global);
  } catch (error) {
    return fail((error as Error).message);
  }
  const [core, { builtinToolset }, server] = await Promise.all([import('@kosong/core'), import('./tools/builtin-tools.js'), loadServer(fail)]);
  const kernel = new core.Kernel();
  const builtin = builtinToolset({ cwd: process.cwd(), offerBash: true, allowEdits: global.allowEdits === true });
  // Without --allow-bash, every bash call waits for an approval from the page (tool-approval-request).
  const toolset = global.allowBash === true ? builtin : core.requireApproval(builtin, ['bash']);
  const tenantIds = keys.length === 0 ? [LOCAL_TENANT] : [...new Set(keys.map((key) => key.tenant))];
  try {
    await kernel.use(provider.create(env), core.definePlugin({ name: 'builtin-tools', setup: (ctx) => ctx.bindToolset(toolset) }));
    for (const tenant of tenantIds) {
      const limits = config.tenants?.[tenant]?.limits;
      kernel.tenants.define(tenant, limits === undefined ? {} : { limits });
    }
    for (const tenant of Object.keys(config.tenants ?? {})) if (!tenantIds.includes(tenant)) throw new Error(`--config: tenant "${tenant}" has no API key`);
  } catch (error) {
    await kernel.dispose();
    fail((error as Error).message);
  }

  let redis: IoRedis.Redis | undefined;
  let sessions: ChatSessions;
  let where: string;
  if (redisUrl !== undefined) {
    const { Redis } = await loadRedis(fail);
    redis = new Redis(redisUrl, { maxRetriesPerRequest: 3, lazyConnect: true });
    try {
      await redis.connect();
    } catch (error) {
      redis.disconnect();
      await kernel.dispose();
      fail(`serve: cannot reach Redis at ${redisUrl}: ${(error as Error).message}`);
    }
    sessions = server.redisSessions(redis);
    where = `chats in Redis ${redisUrl}`;
  } else {
    const folder = config.sessionsDir ?? join(kosongHome(fail), 'serve', 'sessions');
    sessions = server.directorySessions(folder);
    where = `chats in ${folder}`;
  }
  const generation =
    global.maxTokens === undefined && global.temperature === undefined
      ? undefined
      : { ...(global.maxTokens === undefined ? {} : { maxOutputTokens: global.maxTokens }), ...(global.temperature === undefined ? {} : { temperature: global.temperature }) };
  const timeouts = timeoutBudgets(global);
  const auth = keys.length === 0 ? loopbackOnly(() => boundPort) : server.apiKeyAuth(keys);
  let boundPort = listenPort;
  const serverOptions = {
    kernel,
    auth,
    sessions,
    ...(redis === undefined ? {} : { turns: server.redisTurns(redis) }),
    agent: {
      provider: provider.name,
      systemPrompt: global.system ?? config.systemPrompt ?? cliOptions.defaultSystemPrompt(),
      maxSteps: config.maxSteps ?? global.maxSteps,
      ...(generation === undefined ? {} : { generation }),
      ...(timeouts === undefined ? {} : { timeouts }),
    },
  };
  let app: FastifyInstance;
  let page = true;
  try {
    app = server.createServer({ ...serverOptions, page: true });
  } catch (error) {
    // The page is built by `npm run build` of @kosong/server; the chat is served without it.
    process.stderr.write(`kosong serve: no web page (${(error as Error).message}); serving the chat API only\n`);
    page = false;
    app = server.createServer(serverOptions);
  }
  try {
    await app.listen({ port: listenPort, host });
  } catch (error) {
    await app.close().catch(() => undefined);
    await kernel.dispose();
    redis?.disconnect();
    const inUse = (error as NodeJS.ErrnoException).code === 'EADDRINUSE' ? ' (another port: --port <n>, or --port 0 for any free one)' : '';
    fail(`serve: cannot listen on ${host}:${listenPort}: ${(error as Error).message}${inUse}`);
  }
  const address = app.server.address();
  boundPort = typeof address === 'object' && address !== null ? address.port : listenPort;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${boundPort}/`;
  process.stdout.write(`kosong serve: ${url}${page ? '' : ' (chat API only: POST /api/chat)'}\n`);
  process.stdout.write(`  provider ${provider.name}, ${where}, ${keys.length === 0 ? 'no API keys: requests of this machine only' : `${tenantIds.length} tenant(s) by API key`}; Ctrl-C stops\n`);

  let stopping = false;
  const stop = (): void => {
    if (stopping) process.exit(130); // a second Ctrl-C: at once
    stopping = true;
    process.stdout.write('kosong serve: stopping (running turns are aborted)\n');
    void (async () => {
      await app.close();
      await kernel.dispose();
      await redis?.quit().catch(() => undefined);
      process.exit(0);
    })();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

/**
 * Loads `@kosong/server` from `node_modules` at run time (a specifier the bundler leaves alone): the
 * server, Fastify and the page's files stay in their package, loaded only by `kosong serve`.
 */
async function loadServer(fail: (message: string) => never): Promise<ServerModule> {
  const specifier = '@kosong/server';
  try {
    return (await import(specifier)) as ServerModule;
  } catch (error) {
    return fail(`serve needs @kosong/server (npm install @kosong/server): ${(error as Error).message}`);
  }
}

/** Loads ioredis (for --redis), from `node_modules`. */
async function loadRedis(fail: (message: string) => never): Promise<typeof IoRedis> {
  const specifier = 'ioredis';
  try {
    return (await import(specifier)) as typeof IoRedis;
  } catch (error) {
    return fail(`serve --redis needs ioredis (npm install ioredis): ${(error as Error).message}`);
  }
}

/** `$KOSONG_HOME`, by default `~/.kosong`. */
function kosongHome(fail: (message: string) => never): string {
  const home = process.env.KOSONG_HOME;
  if (home === undefined) return `${process.env.HOME ?? '.'}/.kosong`;
  if (!home.startsWith('/')) fail(`KOSONG_HOME must be an absolute path (got ${JSON.stringify(home)})`);
  return home;
}

/**
 * The authentication without API keys: every request is tenant {@link LOCAL_TENANT}, if it is
 * addressed to this machine (its `Host` is 127.0.0.1, localhost or [::1] with the server's port:
 * no DNS rebinding) and comes from a page of this server or from no page (its `Origin`, if any, is
 * this server's: another site open in the browser cannot drive it).
 */
export function loopbackOnly(currentPort: () => number): (request: Request) => string | undefined {
  return (request) => {
    const port = currentPort();
    const host = request.headers.get('host');
    if (host === null || ![`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`].includes(host.toLowerCase())) return undefined;
    const origin = request.headers.get('origin');
    if (origin !== null && origin.toLowerCase() !== `http://${host.toLowerCase()}`) return undefined;
    return LOCAL_TENANT;
  };
}
