import type { StreamReply } from './sse-reply-server.js';

/** A stream reply of text deltas, then finish reason `stop` and a usage chunk. */
export function textReply(texts: readonly string[], options: Omit<StreamReply, 'type' | 'chunks'> & { readonly id?: string } = {}): StreamReply {
  const { id = 'chatcmpl-test', ...rest } = options;
  return {
    type: 'stream',
    chunks: [
      completionChunk({ id, delta: { role: 'assistant', content: '' } }),
      ...texts.map((text) => completionChunk({ id, delta: { content: text } })),
      completionChunk({ id, delta: {}, finishReason: 'stop' }),
      usageChunk({ prompt_tokens: 10, completion_tokens: texts.length }, id),
    ],
    ...rest,
  };
}

/** Fields of one streamed choice delta, as Chat Completions (and Moonshot) send them. */
export interface ChunkDelta {
  readonly role?: string;
  readonly content?: string | null;
  readonly reasoning_content?: string;
  readonly refusal?: string | null;
  readonly tool_calls?: readonly ToolCallChunkDelta[];
  readonly [key: string]: unknown;
}

/** One tool-call delta of a chunk. */
export interface ToolCallChunkDelta {
  readonly index?: number;
  readonly id?: string;
  readonly type?: 'function';
  readonly function?: { readonly name?: string; readonly arguments?: string };
}

/** Usage as the API reports it (Moonshot adds a top-level `cached_tokens`). */
export interface ChunkUsage {
  readonly prompt_tokens: number;
  readonly completion_tokens: number;
  readonly total_tokens?: number;
  readonly cached_tokens?: number;
  readonly prompt_tokens_details?: { readonly cached_tokens?: number };
}

/** A `chat.completion.chunk` with one choice. */
export function completionChunk(options: {
  readonly id?: string;
  readonly delta?: ChunkDelta;
  readonly finishReason?: string | null;
  /** Usage inside the choice, where Moonshot puts it. */
  readonly choiceUsage?: ChunkUsage;
  readonly model?: string;
}): object {
  const choice: Record<string, unknown> = { index: 0, delta: options.delta ?? {}, finish_reason: options.finishReason ?? null };
  if (options.choiceUsage !== undefined) choice['usage'] = withTotal(options.choiceUsage);
  return {
    id: options.id ?? 'chatcmpl-test',
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model: options.model ?? 'test-model',
    choices: [choice],
  };
}

/** The last chunk of a stream with `include_usage`: no choices, the usage. */
export function usageChunk(usage: ChunkUsage, id = 'chatcmpl-test'): object {
  return { id, object: 'chat.completion.chunk', created: 1_700_000_000, model: 'test-model', choices: [], usage: withTotal(usage) };
}

/** A chunk carrying one tool-call delta. */
export function toolCallChunk(delta: ToolCallChunkDelta, id = 'chatcmpl-test'): object {
  return completionChunk({ id, delta: { tool_calls: [delta] } });
}

function withTotal(usage: ChunkUsage): ChunkUsage {
  return usage.total_tokens === undefined ? { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens } : usage;
}
