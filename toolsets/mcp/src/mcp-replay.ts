import type { ReplayPolicy } from '@kosong/core';
import { isReplayPolicy } from '@kosong/core/toolset-kit';
import type { Tool as McpToolInfo } from '@modelcontextprotocol/sdk/types.js';

/**
 * The user's replay policies of a server's tools (see `McpToolsetOptions.replay`): by the tool's
 * name on the server (unprefixed, as `filter` takes it), or a function of the tool as the server
 * lists it, returning `undefined` to leave a tool to its annotations.
 */
export type McpReplayOption = Readonly<Record<string, ReplayPolicy>> | ((tool: McpToolInfo) => ReplayPolicy | undefined);

/**
 * The replay policy an MCP server's annotations give a tool: `'safe'` when it says the tool only
 * reads (`readOnlyHint: true`) or may be called again with no further effect (`idempotentHint: true`),
 * `'never'` otherwise. Annotations are the server's word: from a server you do not trust, override them.
 */
export function replayFromAnnotations(tool: McpToolInfo): ReplayPolicy {
  const hints = tool.annotations;
  return hints?.readOnlyHint === true || hints?.idempotentHint === true ? 'safe' : 'never';
}

/**
 * Checks the `replay` option when the toolset is made, and returns what the toolset keeps of it: the
 * function, or a frozen copy of the record (so that a later change of the caller's object changes nothing).
 *
 * @throws TypeError naming the option (and the tool) for a value that is neither a record of replay
 *   policies nor a function.
 */
export function checkMcpReplayOption(option: unknown): McpReplayOption | undefined {
  if (option === undefined || typeof option === 'function') return option as McpReplayOption | undefined;
  if (typeof option !== 'object' || option === null || Array.isArray(option)) {
    throw new TypeError(`McpToolset: replay must be a record of replay policies by tool name, or a function, got ${describe(option)}`);
  }
  const copy: Record<string, ReplayPolicy> = Object.create(null) as Record<string, ReplayPolicy>;
  for (const [name, policy] of Object.entries(option)) {
    if (!isReplayPolicy(policy)) throw new TypeError(`McpToolset: replay["${name}"] must be 'safe', 'never' or 'ask', got ${describe(policy)}`);
    copy[name] = policy;
  }
  return Object.freeze(copy);
}

/**
 * The replay policy of one of the server's tools: the user's, where the option (as
 * {@link checkMcpReplayOption} returned it) gives one, else the server's annotations.
 *
 * @throws TypeError when the option's function throws or answers something that is no policy (the
 *   caller then takes `'never'`).
 */
export function mcpReplayPolicy(tool: McpToolInfo, option: McpReplayOption | undefined): ReplayPolicy {
  if (option === undefined) return replayFromAnnotations(tool);
  if (typeof option !== 'function') return option[tool.name] ?? replayFromAnnotations(tool);
  let answer: unknown;
  try {
    answer = option(tool);
  } catch (error) {
    throw new TypeError(`replay threw for tool "${tool.name}": ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  if (answer === undefined) return replayFromAnnotations(tool);
  if (!isReplayPolicy(answer)) throw new TypeError(`replay answered ${describe(answer)} for tool "${tool.name}", not 'safe', 'never' or 'ask'`);
  return answer;
}

function describe(value: unknown): string {
  if (typeof value === 'string') return `"${value}"`;
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : String(value);
}
