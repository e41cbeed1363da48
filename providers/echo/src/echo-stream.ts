import { ChatProviderError, type StreamedMessage } from '@kosong/core';

import { parseEchoScript } from './echo-dsl.js';
import type { EchoScriptStep } from './echo-steps.js';
import { PartsStream } from './parts-stream.js';

/** Options of the echo providers' streams. */
export interface EchoStreamOptions {
  /**
   * Delay before each part, in ms (0: yield to the event loop with a timer; undefined: no delay).
   * An abort ends a pending delay at once.
   */
  readonly delayMs?: number;
}

/**
 * Parses a script (one step: see {@link EchoScriptStep}) and returns the stream of its parts. `who`
 * names the provider in the error for a script with no parts.
 *
 * @throws what {@link parseEchoScript} throws, or a `ChatProviderError` when the script has no parts.
 */
export function streamEchoScript(
  step: EchoScriptStep,
  who: string,
  options: EchoStreamOptions,
  signal: AbortSignal | undefined,
): StreamedMessage {
  const { parts, id, usage, finishReason } = parseEchoScript(step.script, { firstLine: step.firstLine });
  if (parts.length === 0) throw new ChatProviderError(`${who} DSL produced no streamable parts.`);
  return new PartsStream(parts, { id, usage, finishReason, delayMs: options.delayMs, signal });
}
