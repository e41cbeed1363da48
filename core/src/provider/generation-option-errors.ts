/**
 * Errors about generation options (see `GenerationOptions`). Both belong to the
 * {@link ChatProviderError} family, are not retryable (the agent loop gives up at once: the same
 * request would fail again), and carry a static `isInstance(e)` that works across duplicated copies
 * of this package.
 *
 * @module
 */

import { errorMarker, hasErrorMarker, markError } from '../error-marker.js';
import { ChatProviderError } from './errors.js';

const INVALID_GENERATION_OPTION_ERROR = errorMarker('InvalidGenerationOptionError');
const UNSUPPORTED_GENERATION_OPTION_ERROR = errorMarker('UnsupportedGenerationOptionError');

/**
 * A generation option has a value no provider could honour: a temperature that is not a finite
 * number from 0 to 2, a `maxOutputTokens` that is not a positive integer, a `toolChoice` naming a
 * tool the request does not offer, an unknown option name, …
 *
 * Raised by `withGeneration` for the provider's own options, and at call time (`generate`, `step`)
 * for per-call options.
 */
export class InvalidGenerationOptionError extends ChatProviderError {
  /** The option's name as given (for an unknown option, the unknown name). */
  readonly option: string;
  /** The provider that was asked, when known. */
  readonly provider: string | undefined;

  constructor(option: string, reason: string, options: { readonly provider?: string | undefined } = {}) {
    const where = options.provider === undefined ? '' : ` (provider "${options.provider}")`;
    super(`Invalid generation option "${option}"${where}: ${reason}`);
    this.option = option;
    this.provider = options.provider;
    markError(this, INVALID_GENERATION_OPTION_ERROR);
  }

  /** Whether `error` is an {@link InvalidGenerationOptionError}. */
  static override isInstance(error: unknown): error is InvalidGenerationOptionError {
    return hasErrorMarker(error, INVALID_GENERATION_OPTION_ERROR);
  }
}

/**
 * A provider was asked for a generation option (or a value of one) its API does not have, e.g. a
 * `seed` from a provider without one, or a fifth stop sequence from the OpenAI API. Raised when the
 * provider is called, instead of silently dropping the option.
 */
export class UnsupportedGenerationOptionError extends ChatProviderError {
  /** The option's name, e.g. `seed`. */
  readonly option: string;
  /** The provider's name, e.g. `kimi`. */
  readonly provider: string;

  /** @param reason what exactly is not supported, when not the option as a whole (e.g. "at most 4 sequences"). */
  constructor(provider: string, option: string, reason?: string) {
    super(`Provider "${provider}" does not support the generation option "${option}"${reason === undefined ? '' : `: ${reason}`}.`);
    this.option = option;
    this.provider = provider;
    markError(this, UNSUPPORTED_GENERATION_OPTION_ERROR);
  }

  /** Whether `error` is an {@link UnsupportedGenerationOptionError}. */
  static override isInstance(error: unknown): error is UnsupportedGenerationOptionError {
    return hasErrorMarker(error, UNSUPPORTED_GENERATION_OPTION_ERROR);
  }
}
