import type { GenerationOptions, ToolCall } from '@kosong/core';
import type { McpTenantToolset } from '@kosong/toolset-mcp';
import { BashApproval, type AskUser } from './approval/bash-approval.js';
import { readProjectInstructions, withInstructions } from './project-instructions.js';
import { chooseSessionFile, type SessionChoice } from './sessions/session-choice.js';
import { CliSession, describeFailure, type TurnOutcome } from './cli-session.js';
import { defaultSystemPrompt, providerEnvironment, ProviderOptionError, type GlobalOptions } from './cli-options.js';
import { chosenProvider } from './provider-catalog.js';
import { sessionInUseMessage } from './session-in-use.js';
import { fail, missingKeyMessage, providerSetupMessage } from './setup-failure.js';
import { approvalSecretFrom } from './approval-secret.js';
import type { RemoteCliSession } from './remote-session.js';
import { JsonRenderer } from './render/json-renderer.js';
import type { Renderer } from './render/renderer.js';
import { TerminalRenderer } from './render/terminal-renderer.js';
import type { TerminalCapabilities } from './terminal/terminal-capabilities.js';
import { timeoutBudgets } from './timeout-flags.js';
import { UsageFileLedger } from './usage/usage-file-ledger.js';
import { usageFilePath } from './usage/usage-file-path.js';

/** A local session, or one whose turns run on `kosong worker` processes (`--redis`). */
export type Session = CliSession | RemoteCliSession;

/** The exit code of a one-shot run by how its turn ended (2 is a usage or setup error: see `fail`). */
export const EXIT_CODE: Record<TurnOutcome, number> = { completed: 0, failed: 1, max_steps: 3, timed_out: 124, interrupted: 130 };

/**
 * The session the options describe: the chosen provider (configured from the environment and the
 * command line), the built-in tools, the session file, the usage file every step is recorded in
 * (see {@link usageFilePath}) — or, with `--redis`, turns submitted to
 * `kosong worker` processes. A setup error (unknown provider, a choice the provider cannot honour, a
 * corrupted session file, a session file another process holds) ends the process with exit code 2,
 * before anything runs. The renderer is the session's, for
 * output of the CLI's own (e.g. `/help`).
 *
 * Without `--allow-bash`, each bash call is put to the user with `ask` (given only where a person
 * can answer: see {@link canAskUser}); without `ask`, bash calls are denied. With `--redis`, the
 * calls are those the worker deferred (`kosong worker` without `--allow-bash`).
 */
export async function openSession(
  options: GlobalOptions,
  terminal: TerminalCapabilities,
  ask: AskUser | undefined,
  command: 'run' | 'chat',
): Promise<{ session: Session; renderer: Renderer; describeTools: () => string; savedAs?: string; mcp?: McpTenantToolset }> {
  // Only chat goes on after Ctrl-C stopped a turn: there, a second one exits.
  const renderer: Renderer = options.json ? new JsonRenderer(process.stdout) : new TerminalRenderer(process.stdout, terminal, { secondCtrlCExits: command === 'chat' });
  // Without --allow-bash, bash calls are put to the user (local: before they run; --redis: when the worker defers them).
  // An edit's question shows its diff (the edit tools' module loads only then).
  const preview = async (call: ToolCall): Promise<string | undefined> => (await import('./tools/file-edits.js')).editPreview(process.cwd(), call);
  const onApproval = new BashApproval({ ask: options.json ? undefined : ask, renderer, preview }).onApproval;
  if (options.redis !== undefined) {
    if (options.providerChosen === true) {
      fail('--provider: with --redis the turns run on `kosong worker` processes, with the provider the worker was started with (kosong --redis <url> --provider <name> worker)');
    }
    if (options.maxTokens !== undefined || options.temperature !== undefined || options.model !== undefined) {
      fail('--model, --max-tokens and --temperature are not supported with --redis yet');
    }
    if (options.timeout !== undefined || options.toolTimeout !== undefined) fail('--timeout and --tool-timeout are not supported with --redis yet');
    // The turns run on `kosong worker` processes, with their provider, tools and (unless --system) system prompt.
    // BullMQ and Redis: loaded only for --redis, and only if installed (@kosong/bullmq is an optional peer dependency).
    const { RemoteCliSession } = await (await import('./redis-support.js')).loadRedisSupport(() => import('./remote-session.js'));
    // Decisions about the worker's deferred calls are signed with KOSONG_APPROVAL_SECRET (the worker's).
    let approvalSecret: string | undefined;
    try {
      approvalSecret = approvalSecretFrom(process.env);
    } catch (error) {
      fail((error as Error).message);
    }
    if (options.mcpConfig !== undefined) fail('--mcp-config is not supported with --redis: the tools are the worker\'s');
    if (options.continue === true || options.resume !== undefined) fail('--continue and --resume are not supported with --redis: --session names the session in Redis');
    const session = new RemoteCliSession({ redis: options.redis, renderer, systemPrompt: options.system, maxSteps: options.maxSteps, session: options.session, onApproval, approvalSecret });
    return { session, renderer, describeTools: () => 'the tools are those of the kosong worker processes that run the turns' };
  }
  const provider = await chosenProvider(options.provider, fail);
  // The session file: --session, a saved session (--continue, --resume), or for chat a new saved one.
  let choice: SessionChoice;
  try {
    choice = await chooseSessionFile(options, command);
  } catch (error) {
    fail((error as Error).message);
  }
  let usageLedger: UsageFileLedger;
  try {
    usageLedger = new UsageFileLedger(usageFilePath());
  } catch (error) {
    fail((error as Error).message);
  }
  // The MCP servers of the config (kosong.json, ~/.config/kosong/config.json, --mcp-config): each a setup error if it cannot be used.
  // A server's elicitation is asked on the terminal, as approvals are (declined where nobody can be asked).
  const mcp = await (await import('./mcp/open-mcp.js')).openMcpServers(options.mcpConfig, process.cwd(), { ask: options.json ? undefined : ask, renderer });
  // AGENTS.md and KOSONG.md of the working directory go after the system prompt; the user is told which.
  const instructions = await readProjectInstructions(process.cwd());
  for (const notice of instructions.notices) renderer.info(notice);
  try {
    const session = await CliSession.open({
      provider,
      renderer,
      cwd: process.cwd(),
      systemPrompt: withInstructions(options.system ?? defaultSystemPrompt(), instructions),
      maxSteps: options.maxSteps,
      allowBash: options.allowBash === true,
      allowEdits: options.allowEdits === true,
      onApproval,
      sessionFile: choice.file,
      showConversation: choice.resumed,
      generation: generationOf(options),
      timeouts: timeoutBudgets(options),
      usageLedger,
      env: providerEnvironment(provider.name, process.env, options),
      ...(mcp.toolset === undefined ? {} : { mcp: mcp.toolset }),
    });
    return {
      session,
      renderer,
      describeTools: mcp.describeTools,
      ...(choice.newId === undefined ? {} : { savedAs: choice.newId }),
      ...(mcp.toolset === undefined ? {} : { mcp: mcp.toolset }),
    };
  } catch (error) {
    await mcp.toolset?.close();
    fail(
      error instanceof ProviderOptionError
        ? error.message
        : (sessionInUseMessage(error) ?? missingKeyMessage(error, provider.name) ?? providerSetupMessage(error, provider.name) ?? describeFailure(error)),
    );
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

export { fail };
