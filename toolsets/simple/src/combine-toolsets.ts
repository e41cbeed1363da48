import {
  toolError,
  type ReplayPolicy,
  type Tool,
  type ToolCall,
  type ToolContext,
  type ToolResult,
  type ToolReturnValue,
  type Toolset,
} from '@kosong/core';
import { describeError, replayPolicyOf, toolNotFound, toolRuntimeError } from '@kosong/core/toolset-kit';
import { ToolNameConflictError } from './errors.js';

/** A toolset with a name for error messages, as given to {@link combineToolsets}. */
export interface NamedToolset {
  readonly name: string;
  readonly toolset: Toolset;
}

interface Source {
  readonly label: string;
  readonly toolset: Toolset;
}

interface Routes {
  /** The `tools` array of each source the routes were built from (identity: rebuilt when one changes). */
  readonly basis: readonly (readonly Tool[])[];
  readonly tools: readonly Tool[];
  readonly byName: ReadonlyMap<string, Source>;
}

/**
 * One toolset over several, e.g. the tools every tenant shares plus a tenant's own: `tools` lists
 * each toolset's tools in the order the toolsets were given, and `handle` hands each call to the
 * toolset that has a tool of that name (none: ``Tool `name` not found``).
 *
 * A name provided by two toolsets is an error, not a silent override: `combineToolsets` throws a
 * {@link ToolNameConflictError} naming the tool and both toolsets. Toolsets whose tools change
 * later (e.g. MCP servers) are followed: the routes are rebuilt when a toolset's `tools` array
 * changes, and a conflict that appears then makes `tools` throw and calls of that name get an error
 * result naming both toolsets.
 *
 * Each call's approval check (`Toolset.needsApproval`: a `requireApproval` toolset's, or a tool's
 * `needsApproval`) and replay policy (`Toolset.replayPolicy`) are those of the toolset that has its tool.
 *
 * Name a toolset in errors by passing `{ name, toolset }`; otherwise its own `name` property is used
 * if it has one (as {@link SimpleToolset} does), else its position and class (`toolset #2 (SimpleToolset)`).
 *
 * @throws ToolNameConflictError when two toolsets provide a tool of the same name.
 */
export function combineToolsets(...toolsets: readonly (Toolset | NamedToolset)[]): Toolset {
  const sources = toolsets.map(toSource);
  return new CombinedToolset(sources);
}

class CombinedToolset implements Toolset {
  private routes: Routes;

  constructor(private readonly sources: readonly Source[]) {
    this.routes = buildRoutes(sources);
  }

  get tools(): readonly Tool[] {
    return this.current().tools;
  }

  handle(toolCall: ToolCall, context: ToolContext): ToolResult | Promise<ToolResult> {
    const route = this.route(toolCall.function.name);
    if (!('toolset' in route)) return { toolCallId: toolCall.id, returnValue: route };
    try {
      const handled = route.toolset.handle(toolCall, context);
      if (typeof (handled as Partial<Promise<ToolResult>>).then === 'function') {
        return Promise.resolve(handled).catch((error: unknown) => threw(toolCall, error));
      }
      return handled;
    } catch (error) {
      return threw(toolCall, error);
    }
  }

  /**
   * Whether a call needs approval, as the toolset that has its tool says (`false` when it has no
   * `needsApproval`, and for a name no toolset has or two have: such calls get an error result).
   */
  needsApproval(toolCall: ToolCall, context: ToolContext): boolean | Promise<boolean> {
    const route = this.route(toolCall.function.name);
    if (!('toolset' in route) || typeof route.toolset.needsApproval !== 'function') return false;
    return route.toolset.needsApproval(toolCall, context);
  }

  /**
   * The replay policy of a call, as the toolset that has its tool declares it (`'never'` when that
   * toolset declares none, and for a name no toolset has or two have).
   */
  replayPolicy(toolCall: ToolCall): ReplayPolicy {
    const route = this.route(toolCall.function.name);
    return 'toolset' in route ? replayPolicyOf(route.toolset, toolCall) : 'never';
  }

  /** The toolset that has the tool, or the error result the model gets. */
  private route(name: string): Source | ToolReturnValue {
    try {
      return this.current().byName.get(name) ?? toolNotFound(name);
    } catch (error) {
      if (ToolNameConflictError.isInstance(error) && error.tool === name) return toolError({ message: error.message, brief: 'Tool name conflict' });
      if (!ToolNameConflictError.isInstance(error)) return toolRuntimeError(describeError(error));
    }
    // Another name conflicts: this one may still be unambiguous.
    try {
      const owners = this.sources.filter((source) => source.toolset.tools.some((tool) => tool.name === name));
      return owners.length === 1 ? owners[0]! : toolNotFound(name);
    } catch (error) {
      return toolRuntimeError(describeError(error));
    }
  }

  private current(): Routes {
    const basis = this.routes.basis;
    if (this.sources.some((source, index) => source.toolset.tools !== basis[index])) this.routes = buildRoutes(this.sources);
    return this.routes;
  }
}

function buildRoutes(sources: readonly Source[]): Routes {
  const basis = sources.map((source) => source.toolset.tools);
  const byName = new Map<string, Source>();
  const tools: Tool[] = [];
  sources.forEach((source, index) => {
    for (const tool of basis[index]!) {
      const existing = byName.get(tool.name);
      if (existing) throw new ToolNameConflictError(tool.name, [existing.label, source.label]);
      byName.set(tool.name, source);
      tools.push(tool);
    }
  });
  return { basis, tools: Object.freeze(tools), byName };
}

function toSource(entry: Toolset | NamedToolset, index: number): Source {
  if (!('handle' in entry) && 'toolset' in entry) return { label: `"${entry.name}"`, toolset: entry.toolset };
  const toolset = entry as Toolset;
  const ownName = (toolset as { name?: unknown }).name;
  if (typeof ownName === 'string' && ownName !== '') return { label: `"${ownName}"`, toolset };
  const className = Object.getPrototypeOf(toolset)?.constructor?.name as string | undefined;
  return { label: `toolset #${index + 1}${className && className !== 'Object' ? ` (${className})` : ''}`, toolset };
}

function threw(call: ToolCall, error: unknown): ToolResult {
  return { toolCallId: call.id, returnValue: toolRuntimeError(describeError(error)) };
}
