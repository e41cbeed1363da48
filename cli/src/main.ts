#!/usr/bin/env node
/**
 * The `kosong` command. See the project README for every command and flag.
 *
 * @module
 */
import { InvalidGenerationOptionError, validateGenerationOptions, type GenerationOptions } from '@kosong/core';
import { Command, InvalidArgumentError } from 'commander';
import { createInterface } from 'node:readline';
import { CliSession, describeFailure, type TurnOutcome } from './cli-session.js';
import { RemoteCliSession } from './remote-session.js';
import { startWorker } from './worker-command.js';
import { providerCatalog } from './provider-catalog.js';
import { JsonRenderer } from './render/json-renderer.js';
import type { Renderer } from './render/renderer.js';
import { TerminalRenderer } from './render/terminal-renderer.js';

interface GlobalOptions {
  readonly provider: string;
  readonly json?: boolean;
  readonly session?: string;
  readonly allowBash?: boolean;
  readonly maxSteps: number;
  readonly system?: string;
  readonly maxTokens?: number;
  readonly temperature?: number;
  readonly redis?: string;
}

/** A local session, or one whose turns run on `kosong worker` processes (`--redis`). */
type Session = CliSession | RemoteCliSession;

const EXIT_CODE: Record<TurnOutcome, number> = { completed: 0, failed: 1, interrupted: 130 };

const program = new Command()
  .name('kosong')
  .description('An agent in your terminal: streams a model, runs its tool calls while it talks. Offline by default.')
  .option('-p, --provider <name>', 'the model provider (`kosong providers` lists them)', 'demo')
  .option('--json', 'print one JSON event per line instead of text')
  .option('-s, --session <file>', 'keep the conversation in this JSONL file, and resume it if it exists')
  .option('--allow-bash', 'offer the model a bash tool (it can run any command in the working directory)')
  .option('--max-steps <n>', 'steps per turn at most', positiveInteger, 25)
  .option('--system <prompt>', 'the system prompt')
  .option('--redis <url>', 'run the turns on `kosong worker` processes through this Redis (redis://host:port); --session then names the session in Redis')
  .option('--max-tokens <n>', 'cap on the tokens of each response (thinking included where the provider counts it)', generationValue('maxOutputTokens'))
  .option('--temperature <t>', 'sampling temperature, 0 to 2 (a provider that allows less refuses more)', generationValue('temperature'))
  // Usage errors exit 2, like every other setup error of the CLI (help and version exit 0).
  .exitOverride((error) => process.exit(error.exitCode === 0 ? 0 : 2));

// A reader that stops early (`kosong --json run … | head`) closes the pipe: stop quietly.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});

program
  .command('run')
  .description('run one turn with this prompt, then exit')
  .argument('<prompt...>', 'what to ask')
  .action(async (words: string[]) => {
    const session = await openSession(program.opts<GlobalOptions>());
    const stop = onInterrupt(session, { exitWhenIdle: true });
    const outcome = await session.turn(words.join(' '));
    stop();
    await session.close();
    process.exitCode = EXIT_CODE[outcome];
  });

program
  .command('chat', { isDefault: true })
  .description('an interactive session (the default): one turn per line, Ctrl-C interrupts, Ctrl-C twice or Ctrl-D exits')
  .action(async () => {
    const options = program.opts<GlobalOptions>();
    const session = await openSession(options);
    const interactive = process.stdin.isTTY === true && !options.json;
    const rl = createInterface({ input: process.stdin, ...(interactive ? { output: process.stdout, prompt: '› ' } : {}), terminal: interactive });
    const stop = onInterrupt(session, { exitWhenIdle: true, readline: rl });
    let lastOutcome: TurnOutcome = 'completed';
    if (interactive) rl.prompt();
    for await (const line of rl) {
      const input = line.trim();
      if (input === '') {
        if (interactive) rl.prompt();
        continue;
      }
      if (input === '/exit' || input === '/quit') break;
      lastOutcome = await session.turn(input);
      if (interactive) rl.prompt();
    }
    stop();
    rl.close();
    await session.close();
    process.exitCode = lastOutcome === 'interrupted' ? 0 : EXIT_CODE[lastOutcome];
  });

program
  .command('worker')
  .description('take turns from the Redis given with --redis and run them (an agent worker, and a tool worker for the built-in tools in this directory), until Ctrl-C or SIGTERM')
  .option('--concurrency <n>', 'turns run at once', positiveInteger, 4)
  .action(async (commandOptions: { concurrency: number }) => {
    const options = program.opts<GlobalOptions>();
    if (options.redis === undefined) fail('kosong worker needs --redis <url>');
    const catalog = await providerCatalog();
    const provider = catalog.find((entry) => entry.name === options.provider);
    if (!provider) fail(`unknown provider "${options.provider}"; available: ${catalog.map((e) => e.name).join(', ')}`);
    let worker: Awaited<ReturnType<typeof startWorker>>;
    process.stdout.write(`kosong worker: connecting to ${options.redis} (it waits for Redis to be reachable)\n`);
    try {
      worker = await startWorker({
        redis: options.redis,
        provider,
        concurrency: commandOptions.concurrency,
        cwd: process.cwd(),
        allowBash: options.allowBash === true,
        systemPrompt: options.system ?? defaultSystemPrompt(),
        maxSteps: options.maxSteps,
        env: process.env,
      });
    } catch (error) {
      fail(describeFailure(error));
    }
    process.stdout.write(`kosong worker ${worker.id}: provider ${provider.name}, ${commandOptions.concurrency} turns at once, tools in ${process.cwd()}\n`);
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
    for (const entry of await providerCatalog()) process.stdout.write(`${entry.name.padEnd(12)} ${entry.description}\n`);
  });

async function openSession(options: GlobalOptions): Promise<Session> {
  const renderer: Renderer = options.json ? new JsonRenderer(process.stdout) : new TerminalRenderer(process.stdout, process.stdout.isTTY === true);
  if (options.redis !== undefined) {
    if (options.maxTokens !== undefined || options.temperature !== undefined) fail('--max-tokens and --temperature are not supported with --redis yet');
    // The turns run on `kosong worker` processes, with their provider, tools and (unless --system) system prompt.
    return new RemoteCliSession({ redis: options.redis, renderer, systemPrompt: options.system, maxSteps: options.maxSteps, session: options.session });
  }
  const catalog = await providerCatalog();
  const provider = catalog.find((entry) => entry.name === options.provider);
  if (!provider) fail(`unknown provider "${options.provider}"; available: ${catalog.map((e) => e.name).join(', ')}`);
  try {
    return await CliSession.open({
      provider,
      renderer,
      cwd: process.cwd(),
      systemPrompt: options.system ?? defaultSystemPrompt(),
      maxSteps: options.maxSteps,
      allowBash: options.allowBash === true,
      sessionFile: options.session,
      generation: generationOf(options),
      env: process.env,
    });
  } catch (error) {
    fail(describeFailure(error));
  }
}

/**
 * Ctrl-C (SIGINT): interrupts the running turn; when nothing runs, or on a second Ctrl-C while the
 * first is being handled, exits with 130.
 */
function onInterrupt(session: Session, options: { exitWhenIdle: boolean; readline?: ReturnType<typeof createInterface> }): () => void {
  let pressedAt = 0;
  const handler = (): void => {
    const now = Date.now();
    if (session.busy && now - pressedAt > 2_000 && session.interrupt()) {
      pressedAt = now;
      return;
    }
    if (options.exitWhenIdle) process.exit(130);
  };
  process.on('SIGINT', handler);
  options.readline?.on('SIGINT', handler);
  return () => {
    process.off('SIGINT', handler);
    options.readline?.off('SIGINT', handler);
  };
}

function defaultSystemPrompt(): string {
  return `You are kosong, a helpful assistant working in ${process.cwd()}. Use the tools to look at files.`;
}

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

/** The generation options the flags ask for (only those given). */
function generationOf(options: GlobalOptions): GenerationOptions {
  return {
    ...(options.maxTokens === undefined ? {} : { maxOutputTokens: options.maxTokens }),
    ...(options.temperature === undefined ? {} : { temperature: options.temperature }),
  };
}

function fail(message: string): never {
  process.stderr.write(`kosong: ${message}\n`);
  process.exit(2);
}

await program.parseAsync(process.argv);
