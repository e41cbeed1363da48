/**
 * Variants of the `openai-responses` suite: the workload ({@link workloadReply}) from a server in
 * its own process, read through the bare `openai` SDK stream (`responses.create`), or through
 * kosong's `OpenAIResponsesChatProvider`.
 *
 * @module
 */
import { fileURLToPath } from 'node:url';

import { OpenAIResponsesChatProvider } from '@kosong/provider-openai';
import OpenAI from 'openai';
import type { PreparedVariant } from '../../harness.js';
import { startServerProcess } from '../../server-process.js';
import { countParts, verifyCounts, type Counts } from './workload.js';

const SERVER = fileURLToPath(new URL('./server-process.js', import.meta.url));

/** The floor: `for await` over the SDK's own stream of events, counting text, calls and arguments. */
export async function prepareSdk(): Promise<PreparedVariant<Counts>> {
  const client = new OpenAI({ baseURL: await startServerProcess(SERVER), apiKey: 'sk-bench', maxRetries: 0, logLevel: 'off' });
  return {
    async run() {
      const stream = await client.responses.create({ model: 'bench', input: [{ role: 'user', content: 'go' }], store: false, stream: true });
      let textChars = 0;
      let toolCalls = 0;
      let argumentChars = 0;
      for await (const event of stream) {
        if (event.type === 'response.output_text.delta') textChars += event.delta.length;
        else if (event.type === 'response.function_call_arguments.delta') argumentChars += event.delta.length;
        else if (event.type === 'response.output_item.added' && event.item.type === 'function_call') toolCalls++;
      }
      return { textChars, toolCalls, argumentChars };
    },
    verify: (counts) => verifyCounts('sdk', counts),
  };
}

/** kosong's provider: `generate` and `for await` over its parts. */
export async function prepareProvider(): Promise<PreparedVariant<Counts>> {
  const provider = new OpenAIResponsesChatProvider({ baseURL: await startServerProcess(SERVER), apiKey: 'sk-bench', model: 'bench' });
  return {
    async run() {
      const stream = await provider.generate('', [], [{ role: 'user', content: [{ type: 'text', text: 'go' }] }]);
      const counts = await countParts(stream);
      if (stream.finishReason !== 'tool_calls') throw new Error(`provider: finish reason ${String(stream.finishReason)}`);
      return counts;
    },
    verify: (counts) => verifyCounts('provider', counts),
  };
}
