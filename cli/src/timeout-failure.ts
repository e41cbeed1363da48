/**
 * How the end of a time budget (`--timeout`, `--tool-timeout`) is told to the user.
 *
 * @module
 */
import { TimeoutBudgetError } from '@kosong/core';
import { formatDuration } from './timeout-flags.js';

/** The flag of each budget the CLI sets. */
const FLAG_OF = { turn: '--timeout', toolCall: '--tool-timeout', step: 'the step budget', idle: 'the idle budget' } as const;

/**
 * What to tell the user when a time budget ended something: which budget (by its flag) and how
 * long it was; `undefined` when `error` is not a `TimeoutBudgetError`.
 */
export function describeTimeout(error: unknown): string | undefined {
  if (!TimeoutBudgetError.isInstance(error)) return undefined;
  const limit = formatDuration(error.limitMs);
  if (error.budget === 'turn') return `timed out: the turn ran longer than ${FLAG_OF.turn} ${limit} and was stopped (its running tools too)`;
  if (error.budget === 'toolCall') {
    return `timed out: the tool call ${error.toolCall?.function.name ?? '?'} ran longer than ${FLAG_OF.toolCall} ${limit} and was stopped`;
  }
  return `timed out: ${FLAG_OF[error.budget]} of ${limit} ran out`;
}
