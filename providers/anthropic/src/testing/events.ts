import type { EventStreamReply } from './messages-server.js';

/** One server-sent event: its name and its data (an object is sent as JSON, a string as it is). */
export interface SseEvent {
  readonly event: string;
  readonly data: object | string;
}

/** Usage counts as the API reports them. */
export interface WireUsage {
  readonly input_tokens?: number | null;
  readonly output_tokens?: number;
  readonly cache_read_input_tokens?: number | null;
  readonly cache_creation_input_tokens?: number | null;
}

/** A content block of a reply, streamed as start, deltas, stop. */
export type ReplyBlock =
  | { readonly type: 'text'; readonly text: readonly string[] }
  | { readonly type: 'thinking'; readonly thinking: readonly string[]; readonly signature: string }
  | { readonly type: 'redacted_thinking'; readonly data: string }
  /** `input` is streamed as `input_json_delta` fragments, as given. */
  | { readonly type: 'tool_use'; readonly id: string; readonly name: string; readonly input: readonly string[] }
  /** Any other block, sent as it is with no deltas (server tools, future block types, …). */
  | { readonly type: 'raw'; readonly block: object; readonly deltas?: readonly object[] };

/** `message_start`, with the input side of the usage. */
export function messageStart(options: { readonly id?: string; readonly model?: string; readonly usage?: WireUsage } = {}): SseEvent {
  return {
    event: 'message_start',
    data: {
      type: 'message_start',
      message: {
        id: options.id ?? 'msg_test_123',
        type: 'message',
        role: 'assistant',
        model: options.model ?? 'claude-test',
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 10, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, ...options.usage },
      },
    },
  };
}

/** `content_block_start`. */
export function blockStart(index: number, block: object): SseEvent {
  return { event: 'content_block_start', data: { type: 'content_block_start', index, content_block: block } };
}

/** `content_block_delta`. */
export function blockDelta(index: number, delta: object): SseEvent {
  return { event: 'content_block_delta', data: { type: 'content_block_delta', index, delta } };
}

/** `content_block_stop`. */
export function blockStop(index: number): SseEvent {
  return { event: 'content_block_stop', data: { type: 'content_block_stop', index } };
}

/** `message_delta` with the stop reason and the (cumulative) output usage. */
export function messageDelta(stopReason: string | null, usage: WireUsage = { output_tokens: 5 }): SseEvent {
  return { event: 'message_delta', data: { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage } };
}

/** `message_stop`. */
export function messageStop(): SseEvent {
  return { event: 'message_stop', data: { type: 'message_stop' } };
}

/** `ping`. */
export function ping(): SseEvent {
  return { event: 'ping', data: { type: 'ping' } };
}

/** An `error` event, as the API sends one mid-stream (e.g. `overloaded_error`). */
export function errorEvent(type: string, message: string): SseEvent {
  return { event: 'error', data: { type: 'error', error: { type, message } } };
}

/** The events of one content block at `index`: start, deltas, stop. */
export function blockEvents(index: number, block: ReplyBlock): SseEvent[] {
  switch (block.type) {
    case 'text':
      return [blockStart(index, { type: 'text', text: '' }), ...block.text.map((text) => blockDelta(index, { type: 'text_delta', text })), blockStop(index)];
    case 'thinking':
      return [
        blockStart(index, { type: 'thinking', thinking: '', signature: '' }),
        ...block.thinking.map((thinking) => blockDelta(index, { type: 'thinking_delta', thinking })),
        blockDelta(index, { type: 'signature_delta', signature: block.signature }),
        blockStop(index),
      ];
    case 'redacted_thinking':
      return [blockStart(index, { type: 'redacted_thinking', data: block.data }), blockStop(index)];
    case 'tool_use':
      return [
        blockStart(index, { type: 'tool_use', id: block.id, name: block.name, input: {} }),
        ...block.input.map((partial_json) => blockDelta(index, { type: 'input_json_delta', partial_json })),
        blockStop(index),
      ];
    case 'raw':
      return [blockStart(index, block.block), ...(block.deltas ?? []).map((delta) => blockDelta(index, delta)), blockStop(index)];
  }
}

/** Options of {@link messageReply}. */
export interface MessageReplyOptions extends Omit<EventStreamReply, 'type' | 'events'> {
  readonly id?: string;
  /** Default `end_turn`, or `tool_use` when a block is a tool use. */
  readonly stopReason?: string;
  /** Usage of `message_start` (input side). */
  readonly startUsage?: WireUsage;
  /** Usage of `message_delta`; default `{output_tokens: 5}`. */
  readonly deltaUsage?: WireUsage;
}

/** A complete streamed message: `message_start`, each block, `message_delta`, `message_stop`. */
export function messageReply(blocks: readonly ReplyBlock[], options: MessageReplyOptions = {}): EventStreamReply {
  const { id, stopReason, startUsage, deltaUsage, ...rest } = options;
  const reason = stopReason ?? (blocks.some((block) => block.type === 'tool_use') ? 'tool_use' : 'end_turn');
  return {
    type: 'stream',
    events: [
      messageStart({ ...(id === undefined ? {} : { id }), ...(startUsage === undefined ? {} : { usage: startUsage }) }),
      ...blocks.flatMap((block, index) => blockEvents(index, block)),
      messageDelta(reason, deltaUsage),
      messageStop(),
    ],
    ...rest,
  };
}

/** A streamed message of one text block, its text in these deltas. */
export function textReply(texts: readonly string[], options: MessageReplyOptions = {}): EventStreamReply {
  return messageReply([{ type: 'text', text: texts }], options);
}
