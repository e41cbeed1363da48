import { tokenUsage, type TokenUsage } from '@kosong/core';

/**
 * The usage counts of a streamed message: `message_start` gives the input side, each
 * `message_delta` the output so far and, on some servers, updated input counts.
 */
export class UsageCounter {
  #seen = false;
  #input = 0;
  #output = 0;
  #cacheRead = 0;
  #cacheCreation = 0;

  /**
   * Takes a `usage` object: every count it has (a number) replaces the one before; missing and
   * `null` counts keep theirs.
   */
  update(usage: unknown): void {
    if (typeof usage !== 'object' || usage === null) return;
    const counts = usage as Record<string, unknown>;
    this.#seen = true;
    this.#input = count(counts['input_tokens'], this.#input);
    this.#output = count(counts['output_tokens'], this.#output);
    this.#cacheRead = count(counts['cache_read_input_tokens'], this.#cacheRead);
    this.#cacheCreation = count(counts['cache_creation_input_tokens'], this.#cacheCreation);
  }

  /**
   * The usage, once the server reported any: Anthropic's `input_tokens` already excludes cache reads
   * and writes, so it is `inputOther` as it is.
   */
  get usage(): TokenUsage | undefined {
    if (!this.#seen) return undefined;
    return tokenUsage({ inputOther: this.#input, output: this.#output, inputCacheRead: this.#cacheRead, inputCacheCreation: this.#cacheCreation });
  }
}

function count(value: unknown, previous: number): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : previous;
}
