import { REDACTED_SECRET } from '@kosong/core/provider-kit';

/**
 * What a redacted value is replaced with, by secret scrubbing, key redaction and pino path redaction
 * alike: core's `REDACTED_SECRET`, the text provider errors carry in place of a key.
 */
export const REDACTED: typeof REDACTED_SECRET = REDACTED_SECRET;

/**
 * The pino `redact` paths the plugin uses unless told otherwise: credentials at the top level of a
 * line and in a top-level `headers` object, e.g. ones a parent logger's mixin adds. Pino paths are
 * exact; {@link DEFAULT_REDACT_KEYS} covers the same keys at any depth of what the plugin logs, so
 * the defaults leave out wildcard paths (`*.apiKey`), which made each line about three times as
 * costly (pino clones every wildcard-matched branch of every record). Add them if your own
 * bindings or mixins need them.
 */
export const DEFAULT_REDACT_PATHS: readonly string[] = Object.freeze([
  'authorization',
  'Authorization',
  'apiKey',
  'api_key',
  'headers.authorization',
  'headers.Authorization',
  'headers["x-api-key"]',
  'headers.cookie',
]);

/**
 * Keys whose values the plugin replaces with {@link REDACTED} at any depth of what it logs (error
 * properties, causes, nested objects). Compared without case, `-` and `_`: `apiKey`, `api_key` and
 * `API-KEY` are one key.
 */
export const DEFAULT_REDACT_KEYS: readonly string[] = Object.freeze([
  'authorization',
  'proxy-authorization',
  'api-key',
  'x-api-key',
  'cookie',
  'set-cookie',
  'password',
  'secret',
  'client-secret',
  'access-token',
  'refresh-token',
]);
