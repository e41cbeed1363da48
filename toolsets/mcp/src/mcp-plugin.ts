import { definePlugin, type Plugin } from '@kosong/core';
import { MCP_TOOLSET_OPTIONS, McpToolset, type McpToolsetOptions } from './mcp-toolset.js';
import { checkKnownOptions, type KnownOptions } from './options.js';

/** Options of {@link mcpPlugin}: those of the toolset, with a required name. */
export interface McpPluginOptions extends McpToolsetOptions {
  /** The plugin's name, also the server's name (in tool descriptions and errors). */
  readonly name: string;
  /**
   * Bind the toolset as the kernel's global toolset (default `true`). Set `false` to combine
   * {@link McpPlugin.toolset} with other tools yourself, or to give it to a tenant; the plugin then
   * only connects and closes it.
   */
  readonly bindToolset?: boolean;
}

const PLUGIN_OPTIONS: KnownOptions<McpPluginOptions> = { ...MCP_TOOLSET_OPTIONS, name: true, bindToolset: true };

/** A kernel plugin over one MCP server. */
export interface McpPlugin extends Plugin {
  /** The plugin's toolset: connected in setup, closed when the kernel is disposed. */
  readonly toolset: McpToolset;
}

/**
 * A kernel plugin that connects to an MCP server in `setup` (failing the `use` call, with the
 * server named, if it cannot), binds its {@link McpToolset} as the global toolset (unless
 * `bindToolset: false`), and closes it when the kernel is disposed.
 *
 * The toolset is also a service: bound as a constant under the `McpToolset` class, named after the
 * server, so a class can `@inject(McpToolset) @named('github')` it. The connection is closed by that
 * binding's deactivation: when the kernel is disposed, or when the `use` call fails after it was bound.
 *
 * The toolset exists from the start as {@link McpPlugin.toolset}, so it can be combined with other
 * toolsets or given to a tenant. One plugin object serves one kernel: disposing the kernel closes
 * the toolset for good.
 *
 * @example
 * const github = mcpPlugin({ name: 'github', server: { type: 'http', url: 'http://127.0.0.1:3000/mcp' } });
 * await kernel.use(providerPlugin, github);
 * await kernel.runner().step({ systemPrompt, history });
 * await kernel.dispose();                        // closes the session
 *
 * @throws TypeError for an option it does not know (in `server` too).
 */
export function mcpPlugin(options: McpPluginOptions): McpPlugin {
  checkKnownOptions('mcpPlugin', options, PLUGIN_OPTIONS);
  const { bindToolset: _bindToolset, ...toolsetOptions } = options;
  const toolset = new McpToolset(toolsetOptions);
  const plugin = definePlugin({
    name: options.name,
    async setup(context) {
      context
        .bind(McpToolset)
        .toConstantValue(toolset)
        .whenNamed(options.name)
        .onDeactivation(() => toolset.close());
      await toolset.connect();
      if (options.bindToolset !== false) context.bindToolset(toolset);
    },
  });
  return Object.freeze({ ...plugin, toolset });
}
