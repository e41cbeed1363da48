/**
 * A small MCP server over stdio with one tool, `count_words`, for the tools example
 * ([tools.ts](tools.ts)). Run it; do not import it (it starts serving when loaded).
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const server = new McpServer({ name: 'word-count', version: '1.0.0' });
server.registerTool('count_words', { description: 'Counts the words of a text.', inputSchema: { text: z.string() } }, ({ text }) => ({
  content: [{ type: 'text', text: String(text.split(/\s+/).filter((word) => word !== '').length) }],
}));
await server.connect(new StdioServerTransport());
