import type { ToolCall } from '../message/parts.js';
import { replayPolicyOf, type ReplayPolicy } from './replay-policy.js';
import type { Tool } from './tool.js';
import type { ToolResult } from './tool-result.js';
import type { ToolContext, Toolset } from './toolset.js';

/**
 * Which calls of a toolset need approval: every call (`true`), the calls of the tools named, or
 * those for which a function says so (it sees the raw call: parse `toolCall.function.arguments`
 * yourself, and treat arguments you cannot read as needing approval).
 */
export type ApprovalPolicy = boolean | readonly string[] | ((toolCall: ToolCall, context: ToolContext) => boolean | Promise<boolean>);

/**
 * The same toolset, with calls that need approval before they run: those the policy selects, and
 * those the toolset itself says need it (its own `needsApproval`, if any). Tools and results are
 * the toolset's own, and so are its replay policies; a `name` property is kept (for `combineToolsets`' error messages).
 *
 * @example
 * const files = requireApproval(await McpToolset.connect(…), ['write_file', 'delete_file']);
 * const remote = requireApproval(remoteToolset, (call) => call.function.name !== 'search');
 */
export function requireApproval(toolset: Toolset, policy: ApprovalPolicy = true): Toolset {
  if (typeof policy !== 'boolean' && typeof policy !== 'function' && !Array.isArray(policy)) {
    throw new TypeError('requireApproval: the policy must be a boolean, a list of tool names or a function');
  }
  return new ApprovalRequiringToolset(toolset, policy);
}

class ApprovalRequiringToolset implements Toolset {
  readonly name: string | undefined;
  private readonly names: ReadonlySet<string> | undefined;

  constructor(
    private readonly inner: Toolset,
    private readonly policy: ApprovalPolicy,
  ) {
    const ownName = (inner as { name?: unknown }).name;
    this.name = typeof ownName === 'string' ? ownName : undefined;
    this.names = Array.isArray(policy) ? new Set(policy as readonly string[]) : undefined;
  }

  get tools(): readonly Tool[] {
    return this.inner.tools;
  }

  handle(toolCall: ToolCall, context: ToolContext): ToolResult | Promise<ToolResult> {
    return this.inner.handle(toolCall, context);
  }

  replayPolicy(toolCall: ToolCall): ReplayPolicy {
    return replayPolicyOf(this.inner, toolCall);
  }

  async needsApproval(toolCall: ToolCall, context: ToolContext): Promise<boolean> {
    const { policy } = this;
    if (policy === true) return true;
    if (this.names ? this.names.has(toolCall.function.name) : typeof policy === 'function' && (await policy(toolCall, context)) === true) return true;
    return typeof this.inner.needsApproval === 'function' && (await this.inner.needsApproval(toolCall, context)) === true;
  }
}
