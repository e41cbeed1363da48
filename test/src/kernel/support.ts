/**
 * Helpers shared by the kernel tests.
 */
import {
  textPart,
  toolCall,
  toolOk,
  type ChatProvider,
  type StreamedMessage,
  type StreamedMessagePart,
  type ToolCall,
  type ToolContext,
  type ToolResult,
  type Toolset,
} from '@kosong/core';
import sinon from 'sinon';
import { mulberry32 } from '@kosong/provider-echo';

/** The history every kernel test sends. */
export const history = [{ role: 'user' as const, content: [textPart('go')] }];
export const base = { systemPrompt: 'You are a test.', history };

/** A tool call to the `fake` tool. */
export const call = (id: string, args = '{}'): ToolCall => toolCall(id, 'fake', args);

/** A finite stream of parts, as a provider would return it. */
export function streamOf(parts: readonly StreamedMessagePart[], id = 'msg'): StreamedMessage {
  return {
    id,
    usage: undefined,
    finishReason: 'stop',
    async *[Symbol.asyncIterator]() {
      for (const part of parts) yield part;
    },
  };
}

/** A provider whose `generate` is a sinon stub streaming `parts` (a fresh stream per call). */
export function fakeProvider(
  name: string,
  parts: readonly StreamedMessagePart[] = [textPart(`hello from ${name}`)],
): ChatProvider & { generate: sinon.SinonStub } {
  const provider = {
    name,
    modelName: `${name}-model`,
    thinkingEffort: undefined,
    generation: {},
    generate: sinon.stub().callsFake(() => Promise.resolve(streamOf(parts, `${name}-msg`))),
    withThinking: sinon.stub().returnsThis(),
    withGeneration: sinon.stub().returnsThis(),
  };
  return provider;
}

/** A toolset whose `handle` is a sinon spy answering synchronously `label:callId`. */
export function spyToolset(label: string): Toolset & { handle: sinon.SinonSpy<Parameters<Toolset['handle']>, ToolResult> } {
  return {
    tools: [{ name: 'fake', description: `the ${label} tool`, parameters: { type: 'object' } }],
    handle: sinon.spy((c: ToolCall, _context: ToolContext): ToolResult => ({ toolCallId: c.id, returnValue: toolOk({ output: `${label}:${c.id}` }) })),
  };
}

/** The `output` of a tool result, as a string. */
export const outputOf = (result: ToolResult): unknown => result.returnValue.output;

/** Awaits a promise (or a function that may throw synchronously) and returns what it rejected with. */
export async function rejectionOf(run: Promise<unknown> | (() => unknown)): Promise<unknown> {
  try {
    await (typeof run === 'function' ? run() : run);
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection, but it resolved');
}

/** Whether a promise has settled, after letting pending callbacks run. */
export async function isSettled(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  await new Promise((resolve) => setImmediate(resolve));
  return settled;
}

/** A small seeded PRNG (the echo package's mulberry32), so that "random" delays are reproducible. */
export const seededRandom = mulberry32;
