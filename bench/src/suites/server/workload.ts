/**
 * The workload of the `server` suite: {@link CHATS} chats at once, each one agent turn of one step
 * that streams {@link DELTAS_BEFORE_GATE} text deltas, waits at a gate shared by every chat (so
 * that all of them are open at the same moment, as real streams spend their life waiting on the
 * model), then streams {@link DELTAS_AFTER_GATE} more and stops.
 *
 * @module
 */
import { definePlugin, Kernel, textPart, tokenUsage, type ChatProvider, type GenerationOptions, type StreamedMessage, type StreamedMessagePart } from '@kosong/core';
import { Gate } from '../concurrent/gated-provider.js';

/** Chats at once. */
export const CHATS = 1_000;
export const DELTAS_BEFORE_GATE = 5;
export const DELTAS_AFTER_GATE = 5;
/** The text of every delta. */
export const DELTA = 'tok ';
/** The whole text of a turn. */
export const TURN_TEXT = DELTA.repeat(DELTAS_BEFORE_GATE + DELTAS_AFTER_GATE);
/** The tenant every chat runs as. */
export const TENANT = 'acme';

const PART: StreamedMessagePart = textPart(DELTA);

/** A provider whose every stream yields its first deltas, waits at `gate`, then yields the rest and stops. */
export class PausingProvider implements ChatProvider {
  readonly name = 'pausing';
  readonly modelName = 'pausing';
  readonly thinkingEffort = undefined;
  readonly generation: GenerationOptions = {};

  constructor(private readonly gate: Gate) {}

  generate(): Promise<StreamedMessage> {
    return Promise.resolve(new PausingStream(this.gate));
  }

  withThinking(): ChatProvider {
    return this;
  }

  withGeneration(): ChatProvider {
    return this;
  }
}

class PausingStream implements StreamedMessage {
  readonly id = 'pausing';
  readonly usage = tokenUsage({ inputOther: 10, output: DELTAS_BEFORE_GATE + DELTAS_AFTER_GATE });
  readonly finishReason = 'stop';

  constructor(private readonly gate: Gate) {}

  async *[Symbol.asyncIterator](): AsyncIterator<StreamedMessagePart> {
    for (let i = 0; i < DELTAS_BEFORE_GATE; i++) yield PART;
    await this.gate.pass();
    for (let i = 0; i < DELTAS_AFTER_GATE; i++) yield PART;
  }
}

/** A kernel whose default provider is a {@link PausingProvider} at `gate`, with the tenant defined. */
export async function benchKernel(gate: Gate): Promise<Kernel> {
  const kernel = new Kernel();
  await kernel.use(definePlugin({ name: 'bench', setup: (ctx) => ctx.bindChatProvider('pausing', new PausingProvider(gate), { default: true }) }));
  kernel.tenants.define(TENANT, {});
  return kernel;
}

/** The heap in use (JS heap and external memory) after full collections (needs `--expose-gc`). */
export async function settledMemory(): Promise<number> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with --expose-gc to measure the memory per stream');
  for (let i = 0; i < 3; i++) {
    await new Promise((resolve) => setImmediate(resolve));
    gc();
  }
  const { heapUsed, external } = process.memoryUsage();
  return heapUsed + external;
}

export { Gate };
