import type { ToolContext } from '@kosong/core';
import { ToolDefinitionError } from './errors.js';

/**
 * Whether a call of a tool must be approved before it runs: always (`true`), never (`false`, the
 * default), or as a function of the call's arguments — parsed and validated, as `execute` would get
 * them — and its context. A throw or a rejection of the function gives the model an error result,
 * and the call does not run.
 */
export type NeedsApproval<Args> = boolean | ((args: Args, context: ToolContext) => boolean | Promise<boolean>);

/** The approval option of a tool definition ({@link defineTool}, {@link defineJsonSchemaTool}). */
export interface ApprovalOption<Args> {
  /**
   * Whether a call needs approval before it runs (see {@link NeedsApproval}): the step's approval
   * handler decides (`onApproval`, or the kernel's `ApprovalHandler`); without one the call is
   * deferred (the agent's turn ends with `approval_required`).
   */
  readonly needsApproval?: NeedsApproval<Args>;
}

/**
 * Checks a tool's `needsApproval` option and returns it as a property to spread (none when unset).
 *
 * @throws ToolDefinitionError naming the tool and the option for a value that is neither a boolean nor a function.
 */
export function checkNeedsApproval<Args>(owner: string, needsApproval: unknown): ApprovalOption<Args> {
  if (needsApproval === undefined) return {};
  if (typeof needsApproval !== 'boolean' && typeof needsApproval !== 'function') {
    throw new ToolDefinitionError(owner, `needsApproval must be a boolean or a function (args, context) => boolean, got ${describe(needsApproval)}`);
  }
  return { needsApproval: needsApproval as NeedsApproval<Args> };
}

/**
 * Refuses options a builder does not know: an option dropped quietly (a misspelt `needsApproval`)
 * would run a tool it was meant to guard.
 *
 * @throws ToolDefinitionError (a `TypeError`) naming the option and the ones there are.
 */
export function checkKnownOptions(owner: string, options: object, known: ReadonlySet<string>, what: string): void {
  for (const key of Object.keys(options)) {
    if (!known.has(key)) {
      throw new ToolDefinitionError(owner, `${what} has no option "${key}" (its options: ${[...known].join(', ')})`);
    }
  }
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'string') return `"${value}"`;
  return typeof value === 'object' ? 'an object' : String(value);
}
