import { createMessage, step } from '@kosong/core';
import { EchoChatProvider } from '@kosong/provider-echo';
import { McpToolset } from '@kosong/toolset-mcp';
import { SimpleToolset, combineToolsets, defineTool } from '@kosong/toolset-simple';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';

const add = defineTool({
  name: 'add',
  description: 'Adds two numbers.',
  parameters: z.object({ a: z.number(), b: z.number().default(0) }),
  execute: ({ a, b }) => String(a + b),
});
// An MCP server over stdio (here a small one of this repository: examples/src/word-count-server.ts).
const words = await McpToolset.connect({
  name: 'words',
  server: { type: 'stdio', command: process.execPath, args: [fileURLToPath(new URL('word-count-server.js', import.meta.url))] },
});
try {
  const toolset = combineToolsets(new SimpleToolset([add], { timeoutMs: 30_000 }), words);
  // The echo provider plays the script in the last user message: here, a model calling both tools.
  const script = [
    'tool_call: {"id": "c1", "name": "add", "arguments": "{\\"a\\": 2, \\"b\\": 3}"}',
    'tool_call: {"id": "c2", "name": "count_words", "arguments": "{\\"text\\": \\"one two three\\"}"}',
  ].join('\n');
  const result = await step({ provider: new EchoChatProvider(), systemPrompt: '', toolset, history: [createMessage('user', script)] });
  for (const { toolCallId, returnValue } of await result.toolResults()) console.log(toolCallId, returnValue.output);
  // c1 5
  // c2 [ { type: 'text', text: '3' } ]   (an MCP tool returns content parts)
} finally {
  await words.close(); // ends the server process: without it, the program would never exit
}
