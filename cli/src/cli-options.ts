/** The options that apply to every command of the `kosong` CLI (see the README for each flag). */
export interface GlobalOptions {
  readonly provider: string;
  readonly model?: string;
  readonly json?: boolean;
  readonly session?: string;
  /** `--continue`: go on with the newest saved session. */
  readonly continue?: boolean;
  /** `--resume <id>`: go on with this saved session. */
  readonly resume?: string;
  readonly allowBash?: boolean;
  /** `--allow-edits`: `write_file` and `edit_file` change files without asking. */
  readonly allowEdits?: boolean;
  readonly maxSteps: number;
  readonly system?: string;
  readonly maxTokens?: number;
  readonly temperature?: number;
  readonly redis?: string;
  /** `--timeout`: each turn's time budget, in ms. */
  readonly timeout?: number;
  /** `--tool-timeout`: each tool call's time budget, in ms. */
  readonly toolTimeout?: number;
  /** `--mcp-config`: the MCP servers' config file (default: `kosong.json`, else `~/.config/kosong/config.json`). */
  readonly mcpConfig?: string;
  /** Whether `--provider` was given on the command line (not its default). */
  readonly providerChosen?: boolean;
}

/** The providers the CLI knows to have one model only: `--model` is refused for them. */
const SINGLE_MODEL_PROVIDERS: ReadonlySet<string> = new Set(['demo', 'echo']);

/** A command-line choice a provider cannot honour (a usage error: exit 2). */
export class ProviderOptionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProviderOptionError';
  }
}

/**
 * The environment a provider plugin is created from: the process's, with the command line's choices
 * on top. `--model NAME` becomes `<PROVIDER>_MODEL` (`OPENAI_MODEL` for `openai`, `KIMI_MODEL` for
 * `kimi`), the variable every provider plugin of kosong reads its model from.
 *
 * @throws {ProviderOptionError} for `--model` with a provider that has one model (`demo`, `echo`).
 */
export function providerEnvironment(
  provider: string,
  env: Readonly<Record<string, string | undefined>>,
  options: Pick<GlobalOptions, 'model'>,
): Readonly<Record<string, string | undefined>> {
  if (options.model === undefined) return env;
  if (SINGLE_MODEL_PROVIDERS.has(provider)) {
    throw new ProviderOptionError(`--model: the ${provider} provider has one model; --model chooses the model of a provider such as openai or kimi`);
  }
  return { ...env, [`${provider.toUpperCase().replace(/[^A-Z0-9]/g, '_')}_MODEL`]: options.model };
}

/** The system prompt when `--system` is not given. */
export function defaultSystemPrompt(): string {
  return `You are kosong, a helpful assistant working in ${process.cwd()}. Use the tools to look at files.`;
}
