/**
 * The `mcp` suite: what `McpToolset` adds to an MCP tool call round trip over stdio — the call's
 * arguments parsed from the model's JSON, the request through the toolset's connection (abort
 * signal, timeout, progress routing), the result converted to kosong parts — against calling the
 * SDK's `Client.callTool` bare on the same server.
 *
 * @module
 */
import type { Suite } from '../../harness.js';
import { CALLS } from './variants.js';

const variants = async () => import('./variants.js');

/**
 * Runs per process at least: the first thousands of calls are the JIT compiling the SDK's (and the
 * toolset's) code, which one warm-up run of 200 calls leaves mostly undone.
 */
const WARM = { warmup: 10, timed: 5 } as const;

export const mcpSuite: Suite = {
  name: 'mcp',
  title: 'MCP: a tool call round trip over stdio, McpToolset vs the SDK client bare',
  workload:
    `${CALLS} calls per run, one after the other, of \`echo\` on @modelcontextprotocol/server-everything over stdio (one server process per ` +
    'measurement, started and connected before the timed runs); each call\'s result is checked outside the timing',
  baseline: 'sdk',
  variants: [
    {
      name: 'sdk',
      description: '`client.callTool({ name: \'echo\', arguments })` on the SDK\'s `Client` over `StdioClientTransport`: the floor',
      minRuns: WARM,
      load: async () => ({ prepare: (await variants()).prepareSdk }),
    },
    {
      name: 'toolset',
      description: '`McpToolset.handle(toolCall, { signal })` on the same server: JSON arguments parsed, the result converted to a kosong `ToolReturnValue`',
      minRuns: WARM,
      load: async () => ({ prepare: (await variants()).prepareToolset }),
    },
  ],
  targets: [{ variant: 'toolset', baseline: 'sdk', maxRatio: 1.1 }],
};
