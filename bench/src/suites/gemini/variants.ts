/**
 * Variants of the `gemini` suite: the workload (see `workload.ts`) from a Gemini server in its own
 * process, read through the bare `@google/genai` SDK stream, or through kosong's `GeminiChatProvider`.
 *
 * @module
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

import { GoogleGenAI } from '@google/genai';
import { GeminiChatProvider } from '@kosong/provider-google';
import type { PreparedVariant } from '../../harness.js';
import { CALLS, DELTA, TEXT_EVENTS } from './workload.js';

const SERVER_SCRIPT = fileURLToPath(new URL('./server-process.js', import.meta.url));
const MODEL = 'gemini-bench';
const KEY = 'bench-key-0123456789';

interface Counts {
  readonly textChars: number;
  readonly calls: number;
}

function verify(label: string, counts: Counts): void {
  if (counts.textChars !== TEXT_EVENTS * DELTA.length) throw new Error(`${label}: ${counts.textChars} text chars, expected ${TEXT_EVENTS * DELTA.length}`);
  if (counts.calls !== CALLS) throw new Error(`${label}: ${counts.calls} function calls, expected ${CALLS}`);
}

/** Starts the server process; resolves with its URL. It exits with this process. */
function startServer(): Promise<string> {
  const child = fork(SERVER_SCRIPT, [], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    child.once('message', (message) => {
      // From now on the server does not keep this process alive; it exits when this process does.
      child.unref();
      child.channel?.unref();
      resolve((message as { url: string }).url);
    });
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`the bench server exited early (${code})`)));
  });
}

/** The floor: `for await` over the SDK's own stream, adding up the text and the function calls of each chunk. */
export async function prepareSdk(): Promise<PreparedVariant<Counts>> {
  const url = await startServer();
  const client = new GoogleGenAI({ apiKey: KEY, httpOptions: { baseUrl: url } });
  return {
    async run() {
      const stream = await client.models.generateContentStream({
        model: MODEL,
        contents: [{ role: 'user', parts: [{ text: 'go' }] }],
        config: { systemInstruction: { role: 'user', parts: [{ text: '' }] }, automaticContinuation: false },
      });
      let textChars = 0;
      let calls = 0;
      for await (const chunk of stream) {
        for (const part of chunk.candidates?.[0]?.content?.parts ?? []) {
          if (part.text !== undefined) textChars += part.text.length;
          else if (part.functionCall !== undefined) calls++;
        }
      }
      return { textChars, calls };
    },
    verify: (counts) => verify('sdk', counts),
  };
}

/** kosong's provider: `generate` and `for await` over its stream of parts. */
export async function prepareProvider(): Promise<PreparedVariant<Counts>> {
  const url = await startServer();
  const provider = new GeminiChatProvider({ baseURL: url, apiKey: KEY, model: MODEL });
  return {
    async run() {
      const stream = await provider.generate('', [], [{ role: 'user', content: [{ type: 'text', text: 'go' }] }]);
      let textChars = 0;
      let calls = 0;
      for await (const part of stream) {
        if (part.type === 'text') textChars += part.text.length;
        else if (part.type === 'function') calls++;
      }
      if (stream.usage?.output !== TEXT_EVENTS + CALLS) throw new Error(`provider: usage ${JSON.stringify(stream.usage)}`);
      return { textChars, calls };
    },
    verify: (counts) => verify('provider', counts),
  };
}
