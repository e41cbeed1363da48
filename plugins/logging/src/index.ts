/**
 * `@kosong/plugin-logging`: structured logs of kosong steps through pino, with secrets redacted.
 *
 * - {@link loggingPlugin}: the kernel plugin (step hooks and the hook-error sink);
 * - {@link StepLogger}: the hooks and sink themselves, for tenants and agents;
 * - {@link SecretScrubber}: the redaction, usable on its own (e.g. in your own pino `hooks.streamWrite`).
 *
 * @packageDocumentation
 */
export { loggingPlugin } from './logging-plugin.js';
export type { LoggingOptions } from './logging-options.js';
export { StepLogger } from './step-logger.js';
export { StepLogHooks } from './step-log-hooks.js';
export { SecretScrubber, type SecretScrubberOptions } from './secret-scrubber.js';
export { DEFAULT_REDACT_KEYS, DEFAULT_REDACT_PATHS, REDACTED } from './redaction-defaults.js';
export { MAX_CONTENT_LENGTH, type LogEventName } from './log-records.js';
