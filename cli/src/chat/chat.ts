import type { GlobalOptions } from '../cli-options.js';
import type { TurnOutcome } from '../cli-session.js';
import { canAskUser, EXIT_CODE, openSession } from '../open-session.js';
import { terminalCapabilities } from '../terminal/terminal-capabilities.js';
import { chatCommand, CHAT_HELP } from './chat-help.js';
import { InputReader } from './input-reader.js';
import { isPromptCommand, promptInput, withResources } from '../mcp/mcp-references.js';

/** A second Ctrl-C within this long of one that stopped a turn exits, even if a new turn runs. */
const DOUBLE_PRESS_MS = 2_000;

/**
 * `kosong chat` (the default command): one turn per input until the end of input, `/exit`, or
 * Ctrl-C twice. With a person at a terminal: a prompt, line editing, multi-line input, and Ctrl-C at
 * the prompt clears the line first. The exit code is that of the last turn (an interrupted one
 * counts as done), 130 when Ctrl-C ended the session.
 */
export async function runChat(options: GlobalOptions): Promise<void> {
  const terminal = terminalCapabilities(process.stdout, process.stdin, process.env);
  // Bash calls are put to the user at the terminal (unless --allow-bash), on the reader's own line.
  const ask = canAskUser(options, process.stdin, process.stdout) ? (question: string, signal: AbortSignal) => reader.question(question, signal) : undefined;
  const { session, renderer, describeTools, savedAs, mcp } = await openSession(options, terminal, ask, 'chat');
  // A person at a terminal (not a pipe, not --json): Ctrl-C at the prompt clears before it exits.
  const person = process.stdin.isTTY === true && !options.json;
  const lineEditing = person && terminal.lineEditing;

  /** Whether the next Ctrl-C at the prompt exits: after one that cleared or found an empty line, or stopped a turn. */
  let armed = false;
  let interruptedAt = -Infinity;
  /** Exits 130; `newline`: end the line the cursor is on first, so the shell's prompt starts a line of its own. */
  const exit = (newline = person): never => {
    if (newline) process.stdout.write('\n');
    process.exit(130);
  };
  const onCtrlC = (): void => {
    if (session.busy) {
      if (Date.now() - interruptedAt > DOUBLE_PRESS_MS && session.interrupt()) {
        interruptedAt = Date.now();
        armed = true;
        return;
      }
      exit();
    }
    if (!person || !reader.atPrompt) exit();
    const dropped = reader.cancelInput();
    // With line editing, cancelInput has ended the prompt's line already.
    if (armed && !dropped) exit(!lineEditing);
    armed = true;
    reader.say('(Ctrl-C again to exit, or Ctrl-D; /help for help)');
  };
  const reader = new InputReader({
    input: process.stdin,
    output: process.stdout,
    lineEditing,
    showPrompt: person,
    onInterrupt: onCtrlC,
    onTyping: () => (armed = false),
  });
  process.on('SIGINT', onCtrlC);

  let lastOutcome: TurnOutcome = 'completed';
  for (let input = await reader.next(); input !== undefined; input = await reader.next()) {
    armed = false;
    const text = input.trim();
    if (text === '') continue;
    // MCP: `/prompt [server:]name …` sends a prompt's messages; `@server:uri` adds a resource to the message.
    const mcpInput = isPromptCommand(text) ? await promptInput(text, mcp) : await withResources(text, mcp);
    if (mcpInput !== undefined) {
      if ('error' in mcpInput) renderer.info(mcpInput.error);
      else lastOutcome = await session.turn(text, mcpInput.messages);
      continue;
    }
    const command = chatCommand(text);
    if (command === 'exit') break;
    if (command === 'help') renderer.info(CHAT_HELP);
    else if (command === 'tools') renderer.info(describeTools());
    else if (command !== undefined) renderer.info(`unknown command ${command.unknown}; /help lists the commands`);
    else lastOutcome = await session.turn(text);
  }
  process.off('SIGINT', onCtrlC);
  reader.close();
  await session.close();
  // A new saved session that got a turn: how to go on with it (told to a person; a program reading the output has `kosong sessions`).
  if (person && savedAs !== undefined && session.saved) renderer.info(`session saved: ${savedAs} (kosong --resume ${savedAs} goes on with it; kosong sessions lists them)`);
  process.exitCode = lastOutcome === 'interrupted' ? 0 : EXIT_CODE[lastOutcome];
}
