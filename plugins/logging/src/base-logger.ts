import { pino, type DestinationStream, type Logger } from 'pino';
import type { FileDestination } from './file-destination.js';
import type { LoggingOptions } from './logging-options.js';
import { DEFAULT_REDACT_PATHS } from './redaction-defaults.js';
import type { SecretScrubber } from './secret-scrubber.js';

/** Pino's public symbol of a logger's hooks (`logMethod`, `streamWrite`); children inherit it. */
const PINO_HOOKS: unique symbol = Symbol.for('pino.hooks') as never;

interface PinoHooks {
  readonly logMethod?: unknown;
  readonly streamWrite?: (line: string) => string;
}

/**
 * The logger the plugin's per-step children derive from: built from `destination`/`level`/`name`,
 * or a child of the given `logger`. Either way it has the plugin's pino redact paths, and every
 * line it (or a child) writes goes through `scrubber.scrubLine` just before the destination.
 *
 * @param file the destination opened for a `destination` given as a path or descriptor.
 * @throws {TypeError} if both `logger` and `destination` are given.
 */
export function createBaseLogger(options: LoggingOptions, scrubber: SecretScrubber, file: FileDestination | undefined): Logger {
  const redact = { paths: [...(options.redactPaths ?? DEFAULT_REDACT_PATHS)], censor: scrubber.censor };
  if (options.logger !== undefined) {
    if (options.destination !== undefined) throw new TypeError('logging: give either `logger` or `destination`, not both');
    const base = options.logger.child(options.name === undefined ? {} : { name: options.name }, {
      redact,
      ...(options.level === undefined ? {} : { level: options.level }),
    });
    if (scrubber.hasSecrets) scrubLinesOf(base, scrubber);
    return base;
  }
  return pino(
    {
      name: options.name ?? 'kosong',
      level: options.level ?? 'info',
      redact,
      ...(scrubber.hasSecrets ? { hooks: { streamWrite: (line: string) => scrubber.scrubLine(line) } } : {}),
    },
    file?.stream ?? (options.destination as DestinationStream | undefined),
  );
}

/**
 * Makes `logger` (a child the plugin owns) and its children scrub every line after any `streamWrite`
 * hook they inherited, through pino's public hooks symbol. Pino reads the hooks at every write, so
 * this covers what the parent's mixins and serializers add to the plugin's lines too.
 */
function scrubLinesOf(logger: Logger, scrubber: SecretScrubber): void {
  const target = logger as unknown as Record<typeof PINO_HOOKS, PinoHooks | undefined>;
  const inherited = target[PINO_HOOKS];
  if (typeof inherited !== 'object' || inherited === null) {
    throw new TypeError('logging: `logger` must be a pino logger (it has no pino hooks to scrub its lines with)');
  }
  const previous = inherited.streamWrite;
  target[PINO_HOOKS] = {
    ...inherited,
    streamWrite: previous === undefined ? (line) => scrubber.scrubLine(line) : (line) => scrubber.scrubLine(previous(line)),
  };
}
