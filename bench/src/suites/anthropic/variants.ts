/**
 * Variants of the `anthropic` suite: the workload ({@link workloadReply}) from a server in its own
 * process, read through the bare `@anthropic-ai/sdk` stream, or through kosong's
 * `AnthropicChatProvider`.
 *
 * @module
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

import Anthropic from '@anthropic-ai/sdk';
import { AnthropicChatProvider } from '@kosong/provider-anthropic';
import type { PreparedVariant } from '../../harness.js';
import { verifyCounts, type Counts } from './workload.js';

const MODEL = 'claude-bench';
const MAX_TOKENS = 200_000;

/** Starts the server process and resolves with its URL; the server ends when this process does. */
async function startServer(): Promise<string> {
  const child = spawn(process.execPath, [fileURLToPath(new URL('./server-process.js', import.meta.url))], { stdio: ['pipe', 'pipe', 'inherit'] });
  child.unref();
  child.stdout.setEncoding('utf8');
  let output = '';
  for await (const chunk of child.stdout as AsyncIterable<string>) {
    output += chunk;
    if (output.includes('\n')) break;
  }
  const url = output.trim();
  if (!url.startsWith('http://127.0.0.1:')) {
    child.kill();
    await once(child, 'exit');
    throw new Error(`the bench server did not start: ${JSON.stringify(output)}`);
  }
  return url;
}

/** The floor: `for await` over the SDK's own stream of events, counting text and tool input. */
export async function prepareSdk(): Promise<PreparedVariant<Counts>> {
  const client = new Anthropic({ baseURL: await startServer(), apiKey: 'sk-ant-bench', maxRetries: 0, logLevel: 'off', openTelemetry: false });
  return {
    async run() {
      const stream = await client.messages.create({ model: MODEL, max_tokens: MAX_TOKENS, messages: [{ role: 'user', content: 'go' }], stream: true });
      let textChars = 0;
      let toolCalls = 0;
      let argumentChars = 0;
      for await (const event of stream) {
        if (event.type === 'content_block_delta') {
          if (event.delta.type === 'text_delta') textChars += event.delta.text.length;
          else if (event.delta.type === 'input_json_delta') argumentChars += event.delta.partial_json.length;
        } else if (event.type === 'content_block_start' && event.content_block.type === 'tool_use') {
          toolCalls++;
        }
      }
      return { textChars, toolCalls, argumentChars };
    },
    verify: (counts) => verifyCounts('sdk', counts),
  };
}

/** kosong's provider: `generate` and `for await` over its parts. */
export async function prepareProvider(): Promise<PreparedVariant<Counts>> {
  const provider = new AnthropicChatProvider({ baseURL: await startServer(), apiKey: 'sk-ant-bench', model: MODEL, defaultMaxTokens: MAX_TOKENS });
  return {
    async run() {
      const stream = await provider.generate('', [], [{ role: 'user', content: [{ type: 'text', text: 'go' }] }]);
      let textChars = 0;
      let toolCalls = 0;
      let argumentChars = 0;
      for await (const part of stream) {
        if (part.type === 'text') textChars += part.text.length;
        else if (part.type === 'tool_call_part') argumentChars += part.argumentsPart?.length ?? 0;
        else if (part.type === 'function') toolCalls++;
      }
      if (stream.finishReason !== 'tool_calls') throw new Error(`provider: finish reason ${String(stream.finishReason)}`);
      return { textChars, toolCalls, argumentChars };
    },
    verify: (counts) => verifyCounts('provider', counts),
  };
}
