/**
 * Variants of the `openai` suite: one streamed Chat Completions response of {@link CHUNKS} text
 * chunks from a local server on 127.0.0.1 (in the same process, for both variants), read through
 * the bare `openai` SDK stream, or through kosong's `OpenAIChatProvider`.
 *
 * @module
 */
import { OpenAIChatProvider } from '@kosong/provider-openai';
import { ChatCompletionsServer, completionChunk, usageChunk, type StreamReply } from '@kosong/provider-openai/testing';
import OpenAI from 'openai';
import type { PreparedVariant } from '../../harness.js';

/** Text chunks in the response. */
export const CHUNKS = 100_000;
const DELTA = 'tok ';

function reply(): StreamReply {
  return {
    type: 'stream',
    chunks: [
      ...Array.from({ length: CHUNKS }, () => completionChunk({ delta: { content: DELTA } })),
      completionChunk({ delta: {}, finishReason: 'stop' }),
      usageChunk({ prompt_tokens: 10, completion_tokens: CHUNKS }),
    ],
  };
}

interface Counts {
  readonly textChars: number;
  readonly items: number;
}

function verify(label: string, counts: Counts): void {
  if (counts.textChars !== CHUNKS * DELTA.length) throw new Error(`${label}: ${counts.textChars} text chars, expected ${CHUNKS * DELTA.length}`);
}

/** The floor: `for await` over the SDK's own stream, adding up the text of each chunk. */
export async function prepareSdk(): Promise<PreparedVariant<Counts>> {
  const server = await ChatCompletionsServer.start({ defaultReply: reply() });
  const client = new OpenAI({ baseURL: server.baseURL, apiKey: 'sk-bench', maxRetries: 0 });
  return {
    async run() {
      const stream = await client.chat.completions.create({
        model: 'bench',
        messages: [{ role: 'user', content: 'go' }],
        stream: true,
        stream_options: { include_usage: true },
      });
      let textChars = 0;
      let items = 0;
      for await (const chunk of stream) {
        items++;
        textChars += chunk.choices[0]?.delta.content?.length ?? 0;
      }
      return { textChars, items };
    },
    verify: (counts) => verify('sdk', counts),
  };
}

/** kosong's provider: `generate` and `for await` over its stream of parts. */
export async function prepareProvider(): Promise<PreparedVariant<Counts>> {
  const server = await ChatCompletionsServer.start({ defaultReply: reply() });
  const provider = new OpenAIChatProvider({ baseURL: server.baseURL, apiKey: 'sk-bench', model: 'bench' });
  return {
    async run() {
      const stream = await provider.generate('', [], [{ role: 'user', content: [{ type: 'text', text: 'go' }] }]);
      let textChars = 0;
      let items = 0;
      for await (const part of stream) {
        items++;
        if (part.type === 'text') textChars += part.text.length;
      }
      if (stream.usage?.output !== CHUNKS) throw new Error(`provider: usage ${JSON.stringify(stream.usage)}`);
      return { textChars, items };
    },
    verify: (counts) => verify('provider', counts),
  };
}
