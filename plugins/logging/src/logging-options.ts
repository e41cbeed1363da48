import type { DestinationStream, LevelWithSilentOrString, Logger } from 'pino';

/** Options of {@link loggingPlugin} and {@link StepLogger}. */
export interface LoggingOptions {
  /**
   * An existing pino logger to log through. The plugin logs through a child of it, which gets the
   * plugin's `redactPaths` (pino replaces, not merges, a parent's paths on a child) and a last
   * secret-scrubbing pass over every line; the logger itself is not changed.
   */
  readonly logger?: Logger;
  /** Where to write when no `logger` is given: a pino destination stream, a file path or a file descriptor. Default stdout. */
  readonly destination?: DestinationStream | string | number;
  /** The level; default `info` for a logger the plugin builds, the parent's for a given `logger`. */
  readonly level?: LevelWithSilentOrString;
  /** The logger's `name` field; default `kosong` for a logger the plugin builds, none added to a given `logger`. */
  readonly name?: string;
  /**
   * Literal secret values (API keys, tokens) that must never appear in a log line: each occurrence,
   * in any field (error messages and stacks, causes, tool arguments and output…), is replaced with
   * `[REDACTED]`. Empty strings are ignored.
   */
  readonly secrets?: readonly string[];
  /** Pino `redact` paths; default {@link DEFAULT_REDACT_PATHS}. Give `[]` for none. */
  readonly redactPaths?: readonly string[];
  /** Keys whose values are redacted at any depth; default {@link DEFAULT_REDACT_KEYS}. Give `[]` for none. */
  readonly redactKeys?: readonly string[];
  /** Log every streamed part (debug: its type and length, never its content). Default `false`: too chatty. */
  readonly logParts?: boolean;
  /**
   * Log tool arguments and output (scrubbed, then cut to 2000 characters). Default `false`: lines
   * carry their lengths only. Error messages of failed tool calls are always logged.
   */
  readonly logContent?: boolean;
}
