/**
 * Tokens one generation used. Providers report what they know; unknown counts are 0.
 */
export interface TokenUsage {
  /** Input tokens that were neither read from nor written to the prompt cache. */
  readonly inputOther: number;
  /** Output tokens, reasoning included. */
  readonly output: number;
  /** Input tokens read from the prompt cache. */
  readonly inputCacheRead: number;
  /** Input tokens written to the prompt cache (only some providers report it). */
  readonly inputCacheCreation: number;
}

/** Builds a {@link TokenUsage}; omitted counts are 0. */
export function tokenUsage(counts: Partial<TokenUsage> = {}): TokenUsage {
  return {
    inputOther: counts.inputOther ?? 0,
    output: counts.output ?? 0,
    inputCacheRead: counts.inputCacheRead ?? 0,
    inputCacheCreation: counts.inputCacheCreation ?? 0,
  };
}

/** All input tokens: uncached, cache reads and cache writes. */
export function inputTokens(usage: TokenUsage): number {
  return usage.inputOther + usage.inputCacheRead + usage.inputCacheCreation;
}

/** All tokens: input plus output. */
export function totalTokens(usage: TokenUsage): number {
  return inputTokens(usage) + usage.output;
}

/** The sum of two usages (e.g. over the steps of an agent turn). */
export function addUsage(a: TokenUsage, b: TokenUsage): TokenUsage {
  return {
    inputOther: a.inputOther + b.inputOther,
    output: a.output + b.output,
    inputCacheRead: a.inputCacheRead + b.inputCacheRead,
    inputCacheCreation: a.inputCacheCreation + b.inputCacheCreation,
  };
}
