/**
 * Setup errors of the `kosong` command (exit code 2): one line on stderr and, with `--json`, a
 * `setup_failed` event on stdout, so that a program reading the events learns why nothing ran.
 *
 * @module
 */

/** The exit code of a usage or setup error. */
export const SETUP_EXIT_CODE = 2;

/**
 * Whether the command line asks for `--json`, as commander will parse it (a global option, before
 * or after the command, up to a `--`). Known before parsing: errors of the parsing itself are events too.
 */
export function wantsJson(args: readonly string[] = process.argv.slice(2)): boolean {
  for (const arg of args) {
    if (arg === '--') return false;
    if (arg === '--json') return true;
  }
  return false;
}

/** The `--json` event of a setup error. */
export function setupFailedEvent(message: string): string {
  return `${JSON.stringify({ type: 'setup_failed', message, exitCode: SETUP_EXIT_CODE })}\n`;
}

/** Ends the process with a setup error: one line on stderr (and the event on stdout with `--json`), exit code 2. */
export function fail(message: string): never {
  if (wantsJson()) process.stdout.write(setupFailedEvent(message));
  process.stderr.write(`kosong: ${message}\n`);
  process.exit(SETUP_EXIT_CODE);
}

/**
 * What to say when the provider's plugin found no API key: the provider's environment variable, as
 * the user sets it for the CLI, and `--provider` — not the plugin's `apiKey` option, which a user of
 * the command cannot pass. `undefined` for any other error.
 */
export function missingKeyMessage(error: unknown, provider: string): string | undefined {
  if (!(error instanceof Error)) return undefined;
  const match = /no API key\. Set the (.+?) environment variable, or pass the `apiKey` option ?(.*)$/s.exec(error.message);
  if (!match) return undefined;
  const variables = match[1]!;
  const first = /^[A-Z][A-Z0-9_]*/.exec(variables)?.[0] ?? variables;
  const more = match[2]!.trim();
  return (
    `the ${provider} provider needs an API key: set the ${variables} environment variable (${first}=… kosong --provider ${provider} …)` +
    `${more === '' ? '' : ` ${more}`}, or choose another provider with --provider (kosong providers lists them)`
  );
}

/**
 * What a provider's plugin said about its own setup, with the provider's name first (e.g. `ai-sdk:
 * the AI SDK provider package @ai-sdk/mistral is not installed. Install it …`), found down the
 * error's causes: shown as it is, without the kernel's wrapping of a failed plugin setup or the
 * error's class. `undefined` for any other error.
 */
export function providerSetupMessage(error: unknown, provider: string): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current instanceof Error; depth++, current = current.cause) {
    if (current.message.startsWith(`${provider}: `) || current.message.startsWith(`${provider} (`)) return current.message;
  }
  return undefined;
}
