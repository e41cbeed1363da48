import type { PendingApproval } from '@kosong/core';

/**
 * The `approvalId` of a call that waits for approval, as the `tool-approval-request` chunk gives it
 * and the client's `addToolApprovalResponse` sends it back: `<step id>:<call index>`. It is made
 * from the pending step the context keeps, so any process that restores the chat finds the same
 * ids, and a call id the model used twice in a step still names one call.
 */
export function approvalIdOf(call: PendingApproval): string {
  return `${call.stepId}:${call.index}`;
}
