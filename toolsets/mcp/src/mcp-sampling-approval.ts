/**
 * Sampling approvals through the app's approval handler (the kernel's `ApprovalHandler`, or a
 * step's `onApproval`), so a CLI or a web page asks about a server's sampling request the way it
 * asks about a tool call.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import { extractText, toolCall, type ApprovalDecision, type ApprovalHandler, type ApprovalRequest } from '@kosong/core';
import type { McpSamplingApproval } from './mcp-sampling.js';

/** The tool name of the call an approval handler is shown for a sampling request. */
export const MCP_SAMPLING_APPROVAL_TOOL = 'mcp_sampling';

/** Where the approvals go: an `ApprovalHandler`, or a function of the same shape (`onApproval`). */
export type McpApprovalTarget = ApprovalHandler | ((request: ApprovalRequest) => ApprovalDecision | Promise<ApprovalDecision>);

/**
 * A `sampling.approve` that asks `target`: the handler sees a call of the tool
 * {@link MCP_SAMPLING_APPROVAL_TOOL} whose arguments are `{ server, systemPrompt, maxTokens,
 * messages }` (each message as `{ role, text }`), with the request's signal. `approve` runs the
 * request; `deny` and `defer` (nobody can answer later: the server waits) refuse it.
 *
 * @example
 * sampling: { provider, approve: samplingApprovalThrough(kernelApprovalHandler, { tenant: 'acme' }) }
 */
export function samplingApprovalThrough(target: McpApprovalTarget, options: { readonly tenant?: string } = {}): McpSamplingApproval {
  const decide = typeof target === 'function' ? target : (request: ApprovalRequest) => target.decide(request);
  return async ({ server, params, history, signal }) => {
    const id = `mcp-sampling-${randomUUID()}`;
    const args = {
      server,
      ...(params.systemPrompt === undefined ? {} : { systemPrompt: params.systemPrompt }),
      maxTokens: params.maxTokens,
      messages: history.map((message) => ({ role: message.role, text: extractText(message) })),
    };
    const decision = await decide({ toolCall: toolCall(id, MCP_SAMPLING_APPROVAL_TOOL, JSON.stringify(args)), index: 0, stepId: id, tenant: options.tenant, signal });
    return decision?.type === 'approve';
  };
}
