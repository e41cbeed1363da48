/**
 * A tenant's own MCP servers as one toolset: its connections (one per server, shared by all of the
 * tenant's steps), its credentials, closed with the tenant.
 *
 * @module
 */
import type { Tenants, TenantDefinition, TenantModuleContext, Tool, ToolCall, ToolContext, ToolResult, Toolset, ReplayPolicy } from '@kosong/core';
import { Toolset as ToolsetId } from '@kosong/core';
import { replayPolicyOf, toolNotFound } from '@kosong/core/toolset-kit';
import { McpConnectionError } from './mcp-connection-error.js';
import { MCP_TOOLSET_OPTIONS, McpToolset, type McpToolsetOptions } from './mcp-toolset.js';
import { checkKnownOptions, type KnownOptions } from './options.js';

/** One server of a tenant: the options of an {@link McpToolset}, its name being its key in {@link McpServers}. */
export type McpTenantServer = Omit<McpToolsetOptions, 'name'>;

/**
 * A tenant's MCP servers by name, in the order their tools are offered:
 * `{ crm: { server: { type: 'http', url, headers: { authorization: 'Bearer …' } } }, fs: { server: { type: 'stdio', … }, prefix: 'fs_' } }`.
 */
export type McpServers = Readonly<Record<string, McpTenantServer>>;

/** Options of {@link McpTenantToolset.connect}. */
export interface McpTenantToolsetOptions {
  /** The tenant the servers belong to (in errors). */
  readonly tenant: string;
  /** The tenant's servers (see {@link McpServers}); at least one. */
  readonly servers: McpServers;
}

const TENANT_TOOLSET_OPTIONS: KnownOptions<McpTenantToolsetOptions> = { tenant: true, servers: true };
const { name: _name, ...SERVER_OPTIONS } = MCP_TOOLSET_OPTIONS;

/** A route of a tool name to the server that offers it. */
interface Routes {
  /** The `tools` array of each server the routes were built from (rebuilt when one changes). */
  readonly basis: readonly (readonly Tool[])[];
  readonly tools: readonly Tool[];
  readonly byName: ReadonlyMap<string, McpToolset>;
}

/**
 * The MCP servers of one tenant as one {@link Toolset}: one {@link McpToolset} (one connection: a
 * process, or an HTTP session) per server, shared by every step of the tenant, with the tenant's own
 * credentials (`headers`, `authProvider`, `env`), never another's. Its tools are the servers' tools
 * in the order of the servers; each call goes to the server that offers its tool.
 *
 * Give it to the kernel through the tenant's module, so that removing the tenant closes every
 * connection (the kernel runs a module constant's deactivation whether or not a step used it):
 *
 * @example
 * const acme = await McpTenantToolset.connect({ tenant: 'acme', servers: { crm: { server: { type: 'http', url, headers: { authorization: `Bearer ${acmeToken}` } } } } });
 * kernel.tenants.define('acme', { module: acme.module });
 * await kernel.tenants.remove('acme');          // after its running steps: every connection of acme closed
 *
 * {@link defineMcpTenant} does both in one call.
 */
export class McpTenantToolset implements Toolset {
  /** The tenant the servers belong to. */
  readonly tenant: string;
  readonly #toolsets: readonly McpToolset[];
  #routes: Routes;
  /** The routes before the last change: a step that started with them can still call their tools. */
  #retired: ReadonlyMap<string, McpToolset> = new Map();
  #closing: Promise<void> | undefined;

  private constructor(tenant: string, toolsets: readonly McpToolset[]) {
    this.tenant = tenant;
    this.#toolsets = toolsets;
    this.#routes = buildRoutes(tenant, toolsets, undefined);
  }

  /**
   * Connects to every server of the tenant (at once) and lists their tools.
   *
   * @throws TypeError for an option it does not know (in a server's options too), no servers, or
   *   two servers offering a tool of the same name (give one a `prefix`); {@link McpConnectionError}
   *   (naming the server) if one cannot be reached. Nothing stays open when it throws.
   */
  static async connect(options: McpTenantToolsetOptions): Promise<McpTenantToolset> {
    checkKnownOptions('McpTenantToolset', options, TENANT_TOOLSET_OPTIONS);
    const { tenant, servers } = options;
    if (typeof tenant !== 'string' || tenant === '') throw new TypeError('McpTenantToolset: tenant must be a non-empty string');
    const toolsets = makeToolsets(`McpTenantToolset (tenant "${tenant}")`, servers);
    const connected = await Promise.allSettled(toolsets.map((toolset) => toolset.connect()));
    const failed = connected.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
    let tenantToolset: McpTenantToolset | undefined;
    try {
      if (failed) throw failed.reason;
      tenantToolset = new McpTenantToolset(tenant, toolsets);
      return tenantToolset;
    } catch (error) {
      await Promise.all(toolsets.map((toolset) => toolset.close()));
      throw error;
    }
  }

  /** The tools of every server, in the order of the servers (as of each server's last listing). */
  get tools(): readonly Tool[] {
    return this.#current().tools;
  }

  /** The names of the tenant's servers, in order. */
  get servers(): readonly string[] {
    return this.#toolsets.map((toolset) => toolset.name);
  }

  /** Whether {@link McpTenantToolset.close} was called. */
  get closed(): boolean {
    return this.#closing !== undefined;
  }

  /**
   * The toolset of one server (for its resources, prompts, roots).
   * @throws TypeError for a name that is not one of the tenant's servers.
   */
  server(name: string): McpToolset {
    const toolset = this.#toolsets.find((t) => t.name === name);
    if (!toolset) throw new TypeError(`McpTenantToolset (tenant "${this.tenant}"): no MCP server "${name}" (its servers: ${this.servers.join(', ')})`);
    return toolset;
  }

  /** Hands the call to the server that offers its tool; never rejects (see {@link McpToolset.handle}). */
  handle(toolCall: ToolCall, context: ToolContext): ToolResult | Promise<ToolResult> {
    const toolset = this.#route(toolCall.function.name);
    if (!toolset) return { toolCallId: toolCall.id, returnValue: toolNotFound(toolCall.function.name) };
    return toolset.handle(toolCall, context);
  }

  /** The replay policy of the server that offers the call's tool (`'never'` for a name none offers). */
  replayPolicy(toolCall: ToolCall): ReplayPolicy {
    const toolset = this.#route(toolCall.function.name);
    return toolset ? replayPolicyOf(toolset, toolCall) : 'never';
  }

  /** Closes every connection of the tenant (each as {@link McpToolset.close}); final and idempotent. */
  close(): Promise<void> {
    this.#closing ??= Promise.all(this.#toolsets.map((toolset) => toolset.close())).then(() => undefined);
    return this.#closing;
  }

  /**
   * A tenant module (`tenants.define(id, { module })`) that binds this toolset as the tenant's
   * `Toolset`, closed by the binding's deactivation when the tenant is removed (or the kernel
   * disposed). Call it from a module of your own to bind more: `module: (ctx) => { acme.module(ctx); ctx.bind(ApiKey)… }`.
   */
  readonly module = (context: TenantModuleContext): void => {
    context
      .bind<Toolset>(ToolsetId)
      .toConstantValue(this)
      .onDeactivation(() => this.close());
  };

  #current(): Routes {
    const routes = this.#routes;
    const changed = routes.basis.length !== this.#toolsets.length || this.#toolsets.some((t, i) => t.tools !== routes.basis[i]);
    if (changed) {
      this.#retired = routes.byName;
      this.#routes = buildRoutes(this.tenant, this.#toolsets, this.#reportConflict);
    }
    return this.#routes;
  }

  #route(name: string): McpToolset | undefined {
    return this.#current().byName.get(name) ?? this.#retired.get(name);
  }

  /** A name two servers offer after a change of their lists: the first server keeps it; told to the second's `onError`. */
  readonly #reportConflict = (name: string, kept: McpToolset, dropped: McpToolset): void => {
    const onError = serverOptionsOf.get(dropped)?.onError;
    try {
      onError?.(new McpConnectionError(dropped.name, `tool \`${name}\` is offered by MCP server "${kept.name}" too: only that one's is offered (give one a prefix)`));
    } catch {
      // the handler must not throw; nothing sensible to do if it does
    }
  };
}

/** The options each toolset was made with (for its `onError`). */
const serverOptionsOf = new WeakMap<McpToolset, McpTenantServer>();

function makeToolsets(owner: string, servers: unknown): McpToolset[] {
  if (typeof servers !== 'object' || servers === null || Array.isArray(servers)) throw new TypeError(`${owner}: servers must be an object of servers by name`);
  const entries = Object.entries(servers as Record<string, unknown>);
  if (entries.length === 0) throw new TypeError(`${owner}: servers is empty: give at least one server`);
  return entries.map(([name, options]) => {
    if (name === '') throw new TypeError(`${owner}: a server's name must not be empty`);
    checkKnownOptions(`${owner}: server "${name}"`, options, SERVER_OPTIONS);
    const serverOptions = options as McpTenantServer;
    const toolset = new McpToolset({ ...serverOptions, name });
    serverOptionsOf.set(toolset, serverOptions);
    return toolset;
  });
}

/**
 * The routes of the servers' current tools. A name offered twice: a `TypeError` on connect
 * (`onConflict` not given), else the first server keeps it and `onConflict` is told.
 */
function buildRoutes(tenant: string, toolsets: readonly McpToolset[], onConflict: ((name: string, kept: McpToolset, dropped: McpToolset) => void) | undefined): Routes {
  const byName = new Map<string, McpToolset>();
  const tools: Tool[] = [];
  for (const toolset of toolsets) {
    for (const tool of toolset.tools) {
      const owner = byName.get(tool.name);
      if (owner) {
        if (!onConflict) throw new TypeError(`McpTenantToolset (tenant "${tenant}"): tool \`${tool.name}\` is offered by MCP servers "${owner.name}" and "${toolset.name}": give one a prefix`);
        onConflict(tool.name, owner, toolset);
        continue;
      }
      byName.set(tool.name, toolset);
      tools.push(tool);
    }
  }
  return { basis: toolsets.map((t) => t.tools), tools: Object.freeze(tools), byName };
}

/** What {@link defineMcpTenant} takes: a tenant definition, with its MCP servers instead of a toolset. */
export interface McpTenantDefinition extends Omit<TenantDefinition, 'toolset'> {
  /** The tenant's MCP servers: its toolset (see {@link McpServers}). */
  readonly mcp: McpServers;
}

const DEFINITION_OPTIONS: KnownOptions<McpTenantDefinition> = { mcp: true, provider: true, hooks: true, module: true, modules: true, limits: true };

/**
 * Connects a tenant's MCP servers ({@link McpTenantToolset.connect}), then defines the tenant with
 * them as its toolset: `await defineMcpTenant(kernel.tenants, 'acme', { mcp: { crm: { server } }, provider: 'openai' })`.
 * The rest of the definition is passed on (a `module` of its own runs before the toolset is bound).
 * Removing the tenant (`kernel.tenants.remove`) closes its connections once its running steps end.
 *
 * @returns the tenant's toolset (for its servers' resources and prompts).
 * @throws TypeError for an option it does not know, a `toolset` (the servers are the tenant's
 *   toolset), or bad servers (see {@link McpTenantToolset.connect}); {@link McpConnectionError} if a
 *   server cannot be reached; what `tenants.define` throws (then the connections are closed again).
 */
export async function defineMcpTenant(tenants: Tenants, id: string, definition: McpTenantDefinition): Promise<McpTenantToolset> {
  if (typeof definition === 'object' && definition !== null && Object.hasOwn(definition, 'toolset')) {
    throw new TypeError(`defineMcpTenant("${id}"): a toolset cannot be given with mcp: the servers are the tenant's toolset (define the tenant with tenants.define and McpTenantToolset's module to combine them)`);
  }
  checkKnownOptions(`defineMcpTenant("${id}")`, definition, DEFINITION_OPTIONS);
  const { mcp, module, ...rest } = definition;
  const toolset = await McpTenantToolset.connect({ tenant: id, servers: mcp });
  try {
    tenants.define(id, {
      ...rest,
      module: (context) => {
        module?.(context);
        toolset.module(context);
      },
    });
  } catch (error) {
    await toolset.close();
    throw error;
  }
  return toolset;
}

