/**
 * Helpers of the tenant-limits and usage-ledger tests: a mock provider that counts its requests
 * running at once (at the provider itself) and can hold them, and a toolset that counts its calls.
 */
import { definePlugin, textPart, toolOk, type Message, type StreamedMessage, type Tool, type ToolCall, type ToolContext, type ToolResult, type Toolset } from '@kosong/core';
import type { ProviderGenerateOptions } from '@kosong/core/provider-kit';
import { MockChatProvider, type MockChatProviderOptions } from '@kosong/provider-echo';
import type { StreamedMessagePart } from '@kosong/core';

/** A MockChatProvider that counts its streams running at once, and when each request started. */
export class CountingProvider extends MockChatProvider {
  active = 0;
  maxActive = 0;
  /** When each request came in (`performance.now()`), with the tag of its history's first text. */
  readonly starts: { readonly at: number; readonly tag: string }[] = [];
  /** When set, each request waits for it before streaming. */
  hold: Promise<void> | undefined;

  constructor(parts: readonly StreamedMessagePart[] = [textPart('ok')], options: MockChatProviderOptions = {}) {
    super(parts, options);
  }

  override async generate(systemPrompt: string, tools: readonly Tool[], history: readonly Message[], options: ProviderGenerateOptions = {}): Promise<StreamedMessage> {
    this.active++;
    this.maxActive = Math.max(this.maxActive, this.active);
    const first = history[0]?.content[0];
    this.starts.push({ at: performance.now(), tag: first?.type === 'text' ? first.text : '' });
    let stream: StreamedMessage;
    try {
      if (this.hold) await this.hold;
      stream = await super.generate(systemPrompt, tools, history, options);
    } catch (error) {
      this.active--;
      throw error;
    }
    const done = (): void => {
      this.active--;
    };
    return {
      get id() {
        return stream.id;
      },
      get usage() {
        return stream.usage;
      },
      get finishReason() {
        return stream.finishReason;
      },
      get traceId() {
        return stream.traceId;
      },
      async *[Symbol.asyncIterator]() {
        try {
          yield* stream;
        } finally {
          done();
        }
      },
    };
  }
}

/** A plugin binding `provider` as the default provider `name`. */
export const providerPlugin = (provider: MockChatProvider, name = 'mock', isDefault = name === 'mock') =>
  definePlugin({ name: `provider:${name}`, setup: (ctx) => ctx.bindChatProvider(name, provider, { default: isDefault }) });

/** A history whose first text is `tag`. */
export const historyOf = (tag: string): Message[] => [{ role: 'user', content: [textPart(tag)] }];

/** A toolset whose `handle` takes `ms` and counts the calls running at once. */
export function countingToolset(ms: number): Toolset & { active: number; maxActive: number; calls: number } {
  const toolset = {
    active: 0,
    maxActive: 0,
    calls: 0,
    tools: [{ name: 'fake', description: 'a tool', parameters: { type: 'object' } }] as Tool[],
    async handle(call: ToolCall, context: ToolContext): Promise<ToolResult> {
      toolset.calls++;
      toolset.active++;
      toolset.maxActive = Math.max(toolset.maxActive, toolset.active);
      try {
        await new Promise((resolve) => setTimeout(resolve, ms));
        context.signal.throwIfAborted();
        return { toolCallId: call.id, returnValue: toolOk({ output: `done ${call.id}` }) };
      } finally {
        toolset.active--;
      }
    },
  };
  return toolset;
}

/** The p-th percentile (0–100) of numbers. */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}
