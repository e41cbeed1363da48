/**
 * Checks of the client-feature options of an MCP toolset (roots, sampling, elicitation, callbacks).
 *
 * @module
 * @internal
 */
import type { LoggingLevel } from '@modelcontextprotocol/sdk/types.js';
import { checkKnownOptions, type KnownOptions } from './options.js';
import type { McpSamplingOptions } from './mcp-sampling.js';

const SAMPLING_OPTIONS: KnownOptions<McpSamplingOptions> = { provider: true, approve: true, maxTokens: true };
const LOGGING_LEVELS: readonly LoggingLevel[] = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];
const CALLBACKS = ['elicitation', 'onProgress', 'onLog', 'onResourceUpdated', 'onListChanged', 'onDebug'] as const;

/**
 * @throws TypeError for roots that are not a list of `{ uri, name? }` with string values, a
 *   `sampling` that is not `{ provider, approve?, maxTokens? }` with a provider that can generate, a
 *   callback that is not a function, an unknown `logLevel`, a `maxBlobBytes` that is not a
 *   non-negative integer or a `maxMessageBytes` that is not a positive integer.
 * @internal
 */
export function checkFeatureOptions(options: Readonly<Record<string, unknown>>): void {
  const { roots, sampling, logLevel, maxBlobBytes, maxMessageBytes } = options;
  if (roots !== undefined) {
    if (!Array.isArray(roots)) throw new TypeError('McpToolset: roots must be a list of { uri, name? }');
    for (const root of roots as unknown[]) {
      const { uri, name } = (root ?? {}) as { uri?: unknown; name?: unknown };
      if (typeof root !== 'object' || root === null || typeof uri !== 'string' || (name !== undefined && typeof name !== 'string')) {
        throw new TypeError(`McpToolset: a root must be { uri: string, name?: string }, not ${JSON.stringify(root)}`);
      }
    }
  }
  if (sampling !== undefined) {
    checkKnownOptions('McpToolset: sampling', sampling, SAMPLING_OPTIONS);
    const { provider, approve, maxTokens } = sampling as McpSamplingOptions;
    if (typeof provider !== 'object' || provider === null || typeof provider.generate !== 'function') {
      throw new TypeError('McpToolset: sampling.provider must be a ChatProvider');
    }
    if (approve !== undefined && typeof approve !== 'function') throw new TypeError('McpToolset: sampling.approve must be a function');
    if (maxTokens !== undefined && !(Number.isSafeInteger(maxTokens) && maxTokens > 0)) throw new TypeError('McpToolset: sampling.maxTokens must be a positive integer');
  }
  for (const name of CALLBACKS) {
    if (options[name] !== undefined && typeof options[name] !== 'function') throw new TypeError(`McpToolset: ${name} must be a function`);
  }
  if (logLevel !== undefined && !LOGGING_LEVELS.includes(logLevel as LoggingLevel)) {
    throw new TypeError(`McpToolset: logLevel must be one of ${LOGGING_LEVELS.join(', ')}, not ${JSON.stringify(logLevel)}`);
  }
  if (maxBlobBytes !== undefined && !(Number.isSafeInteger(maxBlobBytes) && (maxBlobBytes as number) >= 0)) {
    throw new TypeError('McpToolset: maxBlobBytes must be a non-negative integer');
  }
  if (maxMessageBytes !== undefined && !(Number.isSafeInteger(maxMessageBytes) && (maxMessageBytes as number) > 0)) {
    throw new TypeError('McpToolset: maxMessageBytes must be a positive integer');
  }
}
