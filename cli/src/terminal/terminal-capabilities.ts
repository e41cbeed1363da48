/** What the CLI may do on its output: each decoration degrades to plain text on its own. */
export interface TerminalCapabilities {
  /** Colour and style codes (SGR), and the spinner: a terminal with colours, not `NO_COLOR`/`TERM=dumb`. */
  readonly decorations: boolean;
  /**
   * Line editing and bracketed paste at the prompt (escape codes that move the cursor and set
   * modes): stdin and stdout are a terminal that is not `TERM=dumb`.
   */
  readonly lineEditing: boolean;
  /** The width to wrap text at, read when needed (the terminal may be resized); `undefined`: do not wrap. */
  columns(): number | undefined;
}

/**
 * What the terminal behind `output` (and `input`) can do. Colours follow Node's own reading of the
 * environment (`NO_COLOR`, `NODE_DISABLE_COLORS`, `FORCE_COLOR`, `TERM=dumb`), on every Node version:
 * Node 20's `styleText` does not check it itself.
 */
export function terminalCapabilities(
  output: NodeJS.WriteStream,
  input: NodeJS.ReadStream | undefined,
  env: Readonly<Record<string, string | undefined>>,
): TerminalCapabilities {
  const tty = output.isTTY === true;
  const dumb = env['TERM'] === 'dumb';
  return {
    decorations: tty && typeof output.hasColors === 'function' && output.hasColors(env),
    lineEditing: tty && input?.isTTY === true && !dumb,
    columns: () => (tty && output.columns > 0 ? output.columns : undefined),
  };
}
