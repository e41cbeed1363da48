/**
 * Helpers of the logging plugin's tests.
 */
import { Kernel, definePlugin, type ChatProvider, type Plugin, type StreamedMessagePart, type Toolset } from '@kosong/core';
import { MockChatProvider } from '@kosong/provider-echo';
import { expect } from 'chai';
import type { DestinationStream } from 'pino';

/** One parsed log line. */
export type LogLine = Record<string, unknown> & {
  readonly level: number;
  readonly msg: string;
  readonly event?: string;
  readonly stepId?: string;
};

/** Pino's numeric levels. */
export const LEVEL = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 } as const;

/** A synchronous in-memory pino destination: every write is one line. */
export class MemoryDestination implements DestinationStream {
  readonly raw: string[] = [];
  flushes = 0;

  write(line: string): void {
    this.raw.push(line);
  }

  flush(callback?: (error?: Error) => void): void {
    this.flushes++;
    callback?.();
  }

  /** Every line, parsed (each must be exactly one JSON object ending with a newline). */
  get lines(): LogLine[] {
    return this.raw.map((raw) => {
      expect(raw.endsWith('\n'), 'a line ends with a newline').to.equal(true);
      expect(raw.slice(0, -1)).not.to.include('\n');
      return JSON.parse(raw) as LogLine;
    });
  }

  /** The lines of one event kind. */
  events(event: string): LogLine[] {
    return this.lines.filter((line) => line.event === event);
  }

  /** The one line of an event kind (fails unless there is exactly one). */
  only(event: string): LogLine {
    const found = this.events(event);
    expect(found, `lines of ${event}`).to.have.lengthOf(1);
    return found[0]!;
  }
}

/** One scripted response per `generate` call: parts to stream, or an error to fail with. */
export type Turn = readonly StreamedMessagePart[] | { readonly error: unknown };

/** A provider that plays `turns` in order, one per call. */
export function sequenceProvider(turns: readonly Turn[], name = 'sequence'): ChatProvider {
  let calls = 0;
  const provider: ChatProvider = {
    name,
    modelName: `${name}-model`,
    thinkingEffort: undefined,
    generate(...args) {
      const turn = turns[calls++];
      if (turn === undefined) return Promise.reject(new Error(`no turn ${calls}`));
      const mock = 'error' in turn ? new MockChatProvider([], { generateError: turn.error }) : new MockChatProvider(turn);
      return mock.generate(...args);
    },
    withThinking: () => provider,
    generation: {},
    withGeneration: () => provider,
  };
  return provider;
}

/** A plugin registering one provider. */
export function providerPlugin(provider: ChatProvider, name = 'models'): Plugin {
  return definePlugin({ name, setup: (ctx) => ctx.bindChatProvider(provider.name, provider) });
}

/** A plugin setting the global toolset. */
export function toolsetPlugin(toolset: Toolset): Plugin {
  return definePlugin({ name: 'tools', setup: (ctx) => ctx.bindToolset(toolset) });
}

/** A kernel with the given plugins. */
export async function kernelWith(...plugins: Plugin[]): Promise<Kernel> {
  const kernel = new Kernel({ hookTimeoutMs: 50, cleanupTimeoutMs: 30 });
  await kernel.use(...plugins);
  return kernel;
}

/** Retry policy that waits (almost) not at all. */
export const fastRetry = { initialDelayMs: 1, maxDelayMs: 2, jitterMs: 0 };

/** Every string in a parsed JSON value (keys included). */
export function stringsIn(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(stringsIn);
  if (typeof value === 'object' && value !== null) return Object.entries(value).flatMap(([k, v]) => [k, ...stringsIn(v)]);
  return [];
}

/**
 * Fails if `secret` occurs in any line: raw, JSON-escaped or URL-encoded in the line text, or in any
 * string of the parsed line (i.e. after JSON unescaping).
 */
export function expectNoSecret(destination: MemoryDestination, secret: string): void {
  const forms = [secret, JSON.stringify(secret).slice(1, -1), encodeURIComponent(secret)];
  expect(destination.raw.length).to.be.greaterThan(0);
  for (const raw of destination.raw) {
    for (const form of forms) expect(raw.includes(form), `secret (as ${form}) in line ${raw}`).to.equal(false);
    for (const text of stringsIn(JSON.parse(raw))) expect(text.includes(secret), `secret in "${text}"`).to.equal(false);
  }
}
