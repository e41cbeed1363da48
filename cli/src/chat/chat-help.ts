/** What `/help` prints in a chat session. */
export const CHAT_HELP = [
  'Type a message and press Enter to send it. A line ending with \\ continues on the next line;',
  'pasted lines are one message (press Enter to send it).',
  '  /help          this help',
  '  /tools         the tools the model has: built-in, then each MCP server\'s',
  '  /prompt [server:]name [key=value …]   send an MCP server\'s prompt',
  '  @server:uri    (in a message) adds that MCP resource to the message',
  '  /exit, /quit   end the session (so does Ctrl-D on an empty line)',
  '  Ctrl-C         stops the running turn; at the prompt, clears the line; twice in a row, exits',
].join('\n');

/** The commands of a chat session. */
export type ChatCommand = 'help' | 'exit' | 'tools';

/**
 * The chat command an input is, if it is one: a single word after a `/` (`/help`). Anything else,
 * even starting with `/` (a path, a sentence), is a message. `unknown` names a `/word` that is not
 * a command.
 */
export function chatCommand(input: string): ChatCommand | { readonly unknown: string } | undefined {
  const match = /^\/([a-z]+)$/i.exec(input);
  if (!match) return undefined;
  switch (match[1]!.toLowerCase()) {
    case 'help':
      return 'help';
    case 'tools':
      return 'tools';
    case 'exit':
    case 'quit':
      return 'exit';
    default:
      return { unknown: input };
  }
}
