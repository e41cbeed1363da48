import type { GenerationOptions } from '@kosong/core';
import { BashApproval, type AskUser } from './approval/bash-approval.js';
import { CliSession, describeFailure, type TurnOutcome } from './cli-session.js';
import { defaultSystemPrompt, providerEnvironment, ProviderOptionError, type GlobalOptions } from './cli-options.js';
import { chosenProvider } from './provider-catalog.js';
import { sessionInUseMessage } from './session-in-use.js';
import type { RemoteCliSession } from './remote-session.js';
import { JsonRenderer } from './render/json-renderer.js';
import type { Renderer } from './render/renderer.js';
import { TerminalRenderer } from './render/terminal-renderer.js';
import type { TerminalCapabilities } from './terminal/terminal-capabilities.js';

/** A local session, or one whose turns run on `kosong worker` processes (`--redis`). */
export type Session = CliSession | RemoteCliSession;

/** The exit code of a one-shot run by how its turn ended. */
export const EXIT_CODE: Record<TurnOutcome, number> = { completed: 0, failed: 1, interrupted: 130 };

/**
 * The session the options describe: the chosen provider (configured from the environment and the
 * command line), the built-in tools, the session file — or, with `--redis`, turns submitted to
 * `kosong worker` processes. A setup error (unknown provider, a choice the provider cannot honour, a
 * corrupted session file, a session file another process holds) ends the process with exit code 2,
 * before anything runs. The renderer is the session's, for
 * output of the CLI's own (e.g. `/help`).
 *
 * Without `--allow-bash`, each bash call is put to the user with `ask` (given only where a person
 * can answer: see {@link canAskUser}); without `ask`, bash calls are denied. With `--redis`, the
 * calls are those the worker deferred (`kosong worker` without `--allow-bash`).
 */
export async function openSession(options: GlobalOptions, terminal: TerminalCapabilities, ask?: AskUser): Promise<{ session: Session; renderer: Renderer }> {
  const renderer: Renderer = options.json ? new JsonRenderer(process.stdout) : new TerminalRenderer(process.stdout, terminal);
  // Without --allow-bash, bash calls are put to the user (local: before they run; --redis: when the worker defers them).
  const onApproval = new BashApproval({ ask: options.json ? undefined : ask, renderer }).onApproval;
  if (options.redis !== undefined) {
    if (options.maxTokens !== undefined || options.temperature !== undefined || options.model !== undefined) {
      fail('--model, --max-tokens and --temperature are not supported with --redis yet');
    }
    // The turns run on `kosong worker` processes, with their provider, tools and (unless --system) system prompt.
    const { RemoteCliSession } = await import('./remote-session.js'); // BullMQ and Redis: loaded only for --redis
    const session = new RemoteCliSession({ redis: options.redis, renderer, systemPrompt: options.system, maxSteps: options.maxSteps, session: options.session, onApproval });
    return { session, renderer };
  }
  const provider = await chosenProvider(options.provider, fail);
  try {
    const session = await CliSession.open({
      provider,
      renderer,
      cwd: process.cwd(),
      systemPrompt: options.system ?? defaultSystemPrompt(),
      maxSteps: options.maxSteps,
      allowBash: options.allowBash === true,
      onApproval,
      sessionFile: options.session,
      generation: generationOf(options),
      env: providerEnvironment(provider.name, process.env, options),
    });
    return { session, renderer };
  } catch (error) {
    fail(error instanceof ProviderOptionError ? error.message : (sessionInUseMessage(error) ?? describeFailure(error)));
  }
}

/**
 * Whether the user can be asked questions (whether to run a bash command): stdin and stdout are a
 * terminal, and the output is not `--json` (a program reads it).
 */
export function canAskUser(options: GlobalOptions, stdin: { readonly isTTY?: boolean }, stdout: { readonly isTTY?: boolean }): boolean {
  return stdin.isTTY === true && stdout.isTTY === true && options.json !== true;
}

/** The generation options the flags ask for (only those given). */
function generationOf(options: GlobalOptions): GenerationOptions {
  return {
    ...(options.maxTokens === undefined ? {} : { maxOutputTokens: options.maxTokens }),
    ...(options.temperature === undefined ? {} : { temperature: options.temperature }),
  };
}

/** Ends the process with a setup error: one line on stderr, exit code 2. */
export function fail(message: string): never {
  process.stderr.write(`kosong: ${message}\n`);
  process.exit(2);
}
