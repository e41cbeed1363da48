/**
 * Variants of the `openai` suite: the workload ({@link workloadReply}) from a server in its own
 * process, read through the bare `openai` SDK stream, or through kosong's `OpenAIChatProvider`.
 *
 * @module
 */
import { fileURLToPath } from 'node:url';

import { OpenAIChatProvider } from '@kosong/provider-openai';
import OpenAI from 'openai';
import type { PreparedVariant } from '../../harness.js';
import { startServerProcess } from '../../server-process.js';
import { countParts, verifyCounts, type Counts } from './workload.js';

const SERVER = fileURLToPath(new URL('./server-process.js', import.meta.url));

/** The floor: `for await` over the SDK's own stream of chunks, counting text, calls and arguments. */
export async function prepareSdk(): Promise<PreparedVariant<Counts>> {
  const client = new OpenAI({ baseURL: await startServerProcess(SERVER), apiKey: 'sk-bench', maxRetries: 0, logLevel: 'off' });
  return {
    async run() {
      const stream = await client.chat.completions.create({
        model: 'bench',
        messages: [{ role: 'user', content: 'go' }],
        stream: true,
        stream_options: { include_usage: true },
      });
      let textChars = 0;
      let toolCalls = 0;
      let argumentChars = 0;
      for await (const chunk of stream) {
        const delta = chunk.choices[0]?.delta;
        if (delta === undefined) continue;
        textChars += delta.content?.length ?? 0;
        for (const call of delta.tool_calls ?? []) {
          if (call.id !== undefined) toolCalls++;
          argumentChars += call.function?.arguments?.length ?? 0;
        }
      }
      return { textChars, toolCalls, argumentChars };
    },
    verify: (counts) => verifyCounts('sdk', counts),
  };
}

/** kosong's provider: `generate` and `for await` over its parts. */
export async function prepareProvider(): Promise<PreparedVariant<Counts>> {
  const provider = new OpenAIChatProvider({ baseURL: await startServerProcess(SERVER), apiKey: 'sk-bench', model: 'bench' });
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
