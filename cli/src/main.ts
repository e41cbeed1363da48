#!/usr/bin/env node
/**
 * The `kosong` command. See the project README for every command and flag.
 *
 * @module
 */
import { InvalidGenerationOptionError } from '@kosong/core/runtime';
import { validateGenerationOptions } from '@kosong/core/provider-kit';
import { DEFAULT_MAX_STEPS } from '@kosong/core';
import { Command, InvalidArgumentError } from 'commander';
import { defaultSystemPrompt, type GlobalOptions } from './cli-options.js';
import { cliVersion } from './cli-version.js';
import type { Session } from './open-session.js';
import { fail, missingKeyMessage, setupFailedEvent, SETUP_EXIT_CODE, wantsJson } from './setup-failure.js';
import { terminalCapabilities } from './terminal/terminal-capabilities.js';
import { parseDuration } from './timeout-flags.js';
import { registerUsageCommand } from './usage/usage-registration.js';
import { registerSessionsCommand } from './sessions/sessions-command.js';
import { registerServeCommand } from './serve-command.js';
import { registerMcpCommand } from './mcp/mcp-command.js';

const EXIT_CODES_HELP =
  'Exit codes: 0 done, 1 the turn failed, 2 bad usage or setup (nothing ran),\n3 the turn stopped at --max-steps, 124 the turn ran out of --timeout, 130 interrupted (Ctrl-C).';

// Each command loads what it needs when it runs (the kernel, the tools, the chosen provider and its
// SDK, BullMQ for the worker): `kosong --help` loads none of it.

const program = new Command()
  .name('kosong')
  .description('An agent in your terminal: streams a model, runs its tool calls while it talks. Offline by default.')
  .version(cliVersion(), '-V, --version', 'print the version and exit')
  .option('-p, --provider <name>', 'the model provider (`kosong providers` lists them; with --redis, the worker chooses it)', 'demo')
  .option('-m, --model <name>', "the provider's model, for providers that offer a choice (sets <PROVIDER>_MODEL, e.g. OPENAI_MODEL)")
  .option('--json', 'print one JSON event per line instead of text')
  .option('-s, --session <file>', 'keep the conversation in this JSONL file, and resume it if it exists (default: chat saves each session in the sessions directory; run keeps none)')
  .option('-c, --continue', 'go on with the newest saved session (kosong sessions lists them)')
  .option('-r, --resume <id>', 'go on with this saved session (its id, or the start of it)')
  .option(
    '--allow-bash',
    'let the bash tool run any command in the working directory without asking (default: on a terminal, ask before each command; elsewhere, and with --json, refuse it)',
  )
  .option(
    '--allow-edits',
    'let write_file and edit_file change files in the working directory without asking (default: on a terminal, ask before each change, showing its diff; elsewhere, and with --json, refuse it)',
  )
  .option('--max-steps <n>', 'steps per turn at most', positiveInteger, DEFAULT_MAX_STEPS)
  .option('--system <prompt>', 'the system prompt')
  .option('--redis <url>', 'run the turns on `kosong worker` processes through this Redis (redis://host:port); --session then names the session in Redis')
  .option('--max-tokens <n>', 'cap on the tokens of each response (thinking included where the provider counts it)', generationValue('maxOutputTokens'))
  .option('--temperature <t>', 'sampling temperature, 0 to 2 (a provider that allows less refuses more)', generationValue('temperature'))
  .option('--timeout <duration>', 'time budget of each turn: ms, or with a unit (90s, 2m); its end stops the turn (exit 124)', parseDuration)
  .option('--tool-timeout <duration>', 'time budget of each tool call: ms, or with a unit (30s); the model is told the call timed out', parseDuration)
  .option('--mcp-config <file>', 'MCP servers to give the model, in the mcpServers JSON shape (default: kosong.json here, else ~/.config/kosong/config.json)')
  // Words that are not a command reach the default action, which names them (not "too many arguments").
  .allowExcessArguments(true)
  // `kosong help [command]`, as `kosong [command] --help`; a command's help lists the global options too.
  .helpCommand(true)
  .configureHelp({ showGlobalOptions: true })
  // Usage errors are setup errors: with --json an event on stdout too (commands inherit this).
  .configureOutput({
    outputError: (message, write) => {
      if (wantsJson()) process.stdout.write(setupFailedEvent(message.replace(/^error: /, '').trimEnd()));
      write(message);
    },
  })
  // Usage errors exit 2, like every other setup error of the CLI (help and version exit 0).
  .exitOverride((error) => process.exit(error.exitCode === 0 ? 0 : SETUP_EXIT_CODE));

program.addHelpText('after', `\n${EXIT_CODES_HELP}`);

/** The global options `kosong worker` refuses, with their flags. */
const WORKER_REFUSES: readonly (readonly [keyof GlobalOptions, string])[] = [
  ['maxTokens', '--max-tokens'],
  ['temperature', '--temperature'],
  ['session', '--session'],
  ['continue', '--continue'],
  ['resume', '--resume'],
  ['json', '--json'],
  ['timeout', '--timeout'],
  ['toolTimeout', '--tool-timeout'],
  ['mcpConfig', '--mcp-config'],
];

/** The global options, and whether `--provider` was given (not its default). */
function globalOptions(): GlobalOptions {
  return { ...program.opts<GlobalOptions>(), providerChosen: program.getOptionValueSource('provider') === 'cli' };
}

// A reader that stops early (`kosong --json run … | head`) closes the pipe: stop quietly.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});

program
  .command('run')
  .description('run one turn with this prompt, then exit')
  .addHelpText('after', `\n${EXIT_CODES_HELP}`)
  .argument('[prompt...]', 'what to ask (the words are joined with spaces); none, or -: read it from stdin (echo "…" | kosong run)')
  .action(async (words: string[]) => {
    const options = globalOptions();
    const prompt = await promptOf(words);
    const { EXIT_CODE, canAskUser, openSession } = await import('./open-session.js');
    // On a terminal each bash call is put to the user (unless --allow-bash); elsewhere it is denied.
    const ask = canAskUser(options, process.stdin, process.stdout) ? (await import('./approval/ask-on-terminal.js')).askOnTerminal(process.stdin, process.stdout) : undefined;
    const { session } = await openSession(options, terminalCapabilities(process.stdout, undefined, process.env), ask, 'run');
    const stop = onInterrupt(session);
    const outcome = await session.turn(prompt);
    stop();
    await session.close();
    process.exitCode = EXIT_CODE[outcome];
  });

program
  .command('chat')
  .description(
    'an interactive session (the default): one turn per message; a line ending with \\ continues, a paste is one message; ' +
      '/help, /exit; Ctrl-C stops the turn or clears the line, Ctrl-C twice or Ctrl-D exits',
  )
  .action(async () => (await import('./chat/chat.js')).runChat(globalOptions()));

program
  .command('worker')
  .description('take turns from the Redis given with --redis and run them (an agent worker, and a tool worker for the built-in tools in this directory), until Ctrl-C or SIGTERM')
  .option('--concurrency <n>', 'turns run at once', positiveInteger, 4)
  .option('--config <file>', 'a JSON file: { "tenants": { "<id>": { "limits": { … } } } }, the tenants whose turns it runs and their limits (counted in Redis, across the workers)')
  .action(async (commandOptions: { concurrency: number; config?: string }) => {
    const options = program.opts<GlobalOptions>();
    if (options.redis === undefined) fail('kosong worker needs --redis <url>');
    // What a worker cannot honour is refused, never ignored: its turns' sessions are the submitters', its output is a log.
    const refused = WORKER_REFUSES.filter(([key]) => options[key] !== undefined).map(([, flag]) => flag);
    if (refused.length > 0) fail(`kosong worker: ${refused.join(', ')} ${refused.length === 1 ? 'is' : 'are'} not supported by the worker (give --model, --system, --max-steps, --allow-bash)`);
    const provider = await (await import('./provider-catalog.js')).chosenProvider(options.provider, fail);
    const { ProviderOptionError, providerEnvironment } = await import('./cli-options.js');
    let env: Readonly<Record<string, string | undefined>>;
    try {
      env = providerEnvironment(provider.name, process.env, options); // --model: <PROVIDER>_MODEL, as for a local run
    } catch (error) {
      fail(error instanceof ProviderOptionError ? error.message : String(error));
    }
    const { loadRedisSupport } = await import('./redis-support.js');
    const [{ startWorker, parseWorkerConfig }, { describeFailure }] = await Promise.all([loadRedisSupport(() => import('./worker-command.js')), import('./cli-session.js')]);
    let config: ReturnType<typeof parseWorkerConfig> = {};
    if (commandOptions.config !== undefined) {
      try {
        config = parseWorkerConfig(await (await import('node:fs/promises')).readFile(commandOptions.config, 'utf8'), commandOptions.config);
      } catch (error) {
        fail(error instanceof Error && error.message.startsWith('--config') ? error.message : `--config ${commandOptions.config}: ${(error as Error).message}`);
      }
    }
    let worker: Awaited<ReturnType<typeof startWorker>>;
    process.stdout.write(`kosong worker: connecting to ${options.redis} (it waits for Redis to be reachable)\n`);
    try {
      worker = await startWorker({
        redis: options.redis,
        provider,
        concurrency: commandOptions.concurrency,
        cwd: process.cwd(),
        allowBash: options.allowBash === true,
        allowEdits: options.allowEdits === true,
        systemPrompt: options.system ?? defaultSystemPrompt(),
        maxSteps: options.maxSteps,
        env,
        ...(config.tenants === undefined ? {} : { tenants: config.tenants }),
      });
    } catch (error) {
      fail(missingKeyMessage(error, provider.name) ?? describeFailure(error));
    }
    process.stdout.write(`kosong worker ${worker.id}: provider ${provider.name}${options.model === undefined ? '' : ` (model ${options.model})`}, ${commandOptions.concurrency} turns at once, tools in ${process.cwd()}\n`);
    for (const warning of worker.warnings) process.stderr.write(`kosong worker: ${warning}\n`);
    let stopping = false;
    const stop = (): void => {
      if (stopping) process.exit(130); // a second Ctrl-C: at once
      stopping = true;
      process.stdout.write('stopping: running turns finish or go back to the queue\n');
      void worker.close().then(() => process.exit(0));
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });

program
  .command('providers')
  .description('list the providers that can be chosen with --provider')
  .action(async () => {
    const catalog = await (await import('./provider-catalog.js')).providerCatalog();
    const width = Math.max(12, ...catalog.map((entry) => entry.name.length));
    for (const entry of catalog) process.stdout.write(`${entry.name.padEnd(width)} ${entry.description}\n`);
  });

registerUsageCommand(program);
registerSessionsCommand(program);
registerServeCommand(program, globalOptions);
registerMcpCommand(program, globalOptions);

// No command: chat. A word that is not a command is an error naming it.
program.action(async () => {
  const [word] = program.args;
  if (word !== undefined) {
    const commands = program.commands.map((command) => command.name()).join(', ');
    program.error(`error: unknown command '${word}' (commands: ${commands}; to ask something once: kosong run "${program.args.join(' ')}")`, {
      code: 'commander.unknownCommand',
      exitCode: 2,
    });
  }
  await (await import('./chat/chat.js')).runChat(globalOptions());
});

/**
 * Ctrl-C (SIGINT) during `run`: interrupts the running turn; when nothing runs, or on a second
 * Ctrl-C while the first is being handled, exits with 130.
 */
function onInterrupt(session: Session): () => void {
  let pressedAt = 0;
  const handler = (): void => {
    const now = Date.now();
    if (session.busy && now - pressedAt > 2_000 && session.interrupt()) {
      pressedAt = now;
      return;
    }
    process.exit(130);
  };
  process.on('SIGINT', handler);
  return () => process.off('SIGINT', handler);
}

/** What `run` is to ask: its words, or stdin when there are none and stdin is not a terminal, or the word is `-`. */
async function promptOf(words: readonly string[]): Promise<string> {
  const fromStdin = words.length === 0 ? process.stdin.isTTY !== true : words.length === 1 && words[0] === '-';
  if (!fromStdin) return words.length === 0 ? fail(NO_PROMPT) : words.join(' ');
  let text = '';
  process.stdin.setEncoding('utf8');
  for await (const chunk of process.stdin) text += chunk as string;
  const prompt = text.replace(/\s+$/, '');
  return prompt.trim() === '' ? fail(NO_PROMPT) : prompt;
}

const NO_PROMPT = 'run: no prompt: give it as arguments (kosong run "…"), or on stdin (echo "…" | kosong run)';

function positiveInteger(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('expected a positive integer');
  return n;
}

/** A parser of a numeric generation option's flag, checked as the providers check it (a usage error otherwise). */
function generationValue(option: 'maxOutputTokens' | 'temperature'): (value: string) => number {
  return (value) => {
    const n = value.trim() === '' ? Number.NaN : Number(value);
    try {
      validateGenerationOptions({ [option]: n });
    } catch (error) {
      if (!InvalidGenerationOptionError.isInstance(error)) throw error;
      throw new InvalidArgumentError(option === 'temperature' ? 'expected a number from 0 to 2' : 'expected a positive integer');
    }
    return n;
  };
}

await program.parseAsync(process.argv);
