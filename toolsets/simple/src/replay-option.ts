import type { ReplayPolicy } from '@kosong/core';
import { isReplayPolicy } from '@kosong/core/toolset-kit';
import { ToolDefinitionError } from './errors.js';

/** The replay option of a tool definition ({@link defineTool}, {@link defineJsonSchemaTool}). */
export interface ReplayOption {
  /**
   * What may happen to a call of this tool that was interrupted (its start recorded, its outcome
   * not: the process running it died, or its worker was lost) when its step is done again:
   *
   * - `'never'` (the default): it is not run again; the model gets an error result saying the call
   *   was interrupted and may have run.
   * - `'safe'`: it runs again (and its calls are not recorded). Declare it only for tools whose
   *   repetition is harmless: reads, lookups, writes that set a value rather than add one.
   * - `'ask'`: the approval handler is asked whether to run it again.
   *
   * Whatever the policy, a tool with an external effect should pass `ToolContext.idempotencyKey` on
   * to the API it calls: a recorded call run again carries the same key. See `ReplayPolicy` in `@kosong/core`.
   */
  readonly replay?: ReplayPolicy;
}

/**
 * Checks a tool's `replay` option and returns it as a property to spread (none when it is not set,
 * so it can be spread under `exactOptionalPropertyTypes`).
 *
 * @throws ToolDefinitionError naming the tool and the option for a value that is no replay policy.
 */
export function checkReplay(owner: string, replay: unknown): ReplayOption {
  if (replay === undefined) return {};
  if (!isReplayPolicy(replay)) {
    const got = typeof replay === 'string' ? `"${replay}"` : typeof replay === 'object' ? (replay === null ? 'null' : 'an object') : String(replay);
    throw new ToolDefinitionError(owner, `replay must be 'safe', 'never' or 'ask', got ${got}`);
  }
  return { replay };
}
