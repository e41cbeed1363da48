import {
  APIConnectionError,
  ChatProviderError,
  textPart,
  thinkPart,
  toolCall,
  toolCallPart,
  type FinishReason,
  type StreamedMessagePart,
  type TokenUsage,
} from '@kosong/core';

import { normalizeStopReason } from './finish-reason.js';
import { redactedThinkPart } from './redacted-thinking.js';
import { UsageCounter } from './usage.js';

type JsonRecord = Record<string, unknown>;

/** The content block being streamed. */
interface OpenBlock {
  readonly index: number;
  /** What its deltas become; `ignored` for blocks kosong has no part for (server tools, …). */
  readonly kind: 'text' | 'thinking' | 'tool_use' | 'ignored';
  /** A `tool_use` block's `input` as the start event gave it (the API sends `{}` and streams the rest). */
  readonly startInput: unknown;
  /** Whether an `input_json_delta` came. */
  sawInput: boolean;
}

/**
 * Turns the events of a streamed Messages API response into kosong parts (kosong spec §7.5), and
 * keeps the message id, the usage and the stop reason.
 *
 * - `message_start` → id and usage, and the parts of the content blocks already complete in it (the
 *   API sends none there; a server that puts the whole message in it does);
 * - `content_block_start`: `text` → text part, `thinking` → think part, `redacted_thinking` → a think
 *   part that goes back as `redacted_thinking`, `tool_use` → a tool call (its arguments follow);
 *   other blocks (server tool use, tool results of server tools, …) are skipped with their deltas;
 * - `content_block_delta`: `text_delta` → text, `thinking_delta` → think, `signature_delta` → a
 *   think part carrying the signature (`encrypted`), `input_json_delta` → tool-call argument
 *   fragment; `citations_delta` and unknown deltas are skipped;
 * - `message_delta` → stop reason and usage; `message_stop` → the message is complete;
 * - `error` → the error (see `onError`); `ping` and unknown events are skipped.
 *
 * It is the provider kit's `StreamEventConverter` of the Messages API.
 */
export class EventConverter {
  /** The message id, from `message_start`. */
  id: string | undefined;
  /** The normalised stop reason, from `message_delta`. */
  finishReason: FinishReason | undefined;
  /** Whether `message_stop` came: the response is complete. */
  complete = false;
  readonly #usage = new UsageCounter();
  #block: OpenBlock | undefined;

  /** @param onError builds the error of an `error` event (with the response's request id). */
  constructor(private readonly onError: (event: JsonRecord) => Error) {}

  /** The usage, once the server reported any. */
  get usage(): TokenUsage | undefined {
    return this.#usage.usage;
  }

  /**
   * Reads one event; writes its parts to `out`.
   *
   * @throws {ChatProviderError} for an `error` event, and for events that make no sense (a delta for
   * a block that is not open, a block started while another is open, an event that is no object).
   */
  push(event: unknown, out: StreamedMessagePart[]): void {
    if (typeof event !== 'object' || event === null || Array.isArray(event)) {
      throw new ChatProviderError(`The server sent a stream event that is not a JSON object: ${preview(event)}`);
    }
    const data = event as JsonRecord;
    switch (data['type']) {
      case 'content_block_delta':
        this.#delta(data, out);
        return;
      case 'content_block_start':
        this.#start(data, out);
        return;
      case 'content_block_stop':
        this.#stop(data, out);
        return;
      case 'message_start': {
        const message = asRecord(data['message']);
        if (typeof message?.['id'] === 'string') this.id = message['id'];
        this.#usage.update(message?.['usage']);
        if (Array.isArray(message?.['content'])) for (const block of message['content'] as unknown[]) this.#completeBlock(asRecord(block) ?? {}, out);
        return;
      }
      case 'message_delta': {
        const stopReason = asRecord(data['delta'])?.['stop_reason'];
        if (typeof stopReason === 'string') this.finishReason = normalizeStopReason(stopReason);
        this.#usage.update(data['usage']);
        return;
      }
      case 'message_stop':
        this.complete = true;
        return;
      case 'error':
        throw this.onError(data);
      default:
        return; // ping, and events newer than this code
    }
  }

  /**
   * The events are over.
   *
   * @throws {APIConnectionError} when `message_stop` never came: the stream ended before the response was complete.
   */
  end(): void {
    if (!this.complete) throw new APIConnectionError('The stream ended before the response was complete (no message_stop event)');
  }

  #delta(data: JsonRecord, out: StreamedMessagePart[]): void {
    const block = this.#open(data);
    const delta = asRecord(data['delta']);
    if (block.kind === 'ignored' || delta === undefined) return;
    switch (delta['type']) {
      case 'text_delta':
        if (typeof delta['text'] === 'string' && delta['text'] !== '') out.push(textPart(delta['text']));
        return;
      case 'thinking_delta':
        if (typeof delta['thinking'] === 'string' && delta['thinking'] !== '') out.push(thinkPart(delta['thinking']));
        return;
      case 'signature_delta':
        if (typeof delta['signature'] === 'string' && delta['signature'] !== '') out.push(thinkPart('', delta['signature']));
        return;
      case 'input_json_delta':
        if (block.kind !== 'tool_use') return;
        block.sawInput = true;
        if (typeof delta['partial_json'] === 'string' && delta['partial_json'] !== '') out.push(toolCallPart(delta['partial_json']));
        return;
      default:
        return; // citations_delta and deltas newer than this code
    }
  }

  #start(data: JsonRecord, out: StreamedMessagePart[]): void {
    const index = data['index'];
    if (typeof index !== 'number') throw new ChatProviderError(`The server started a content block without an index: ${preview(data)}`);
    if (this.#block !== undefined) {
      throw new ChatProviderError(`The server started content block ${index} while block ${this.#block.index} was still open`);
    }
    const block = asRecord(data['content_block']) ?? {};
    switch (block['type']) {
      case 'text':
        this.#block = { index, kind: 'text', startInput: undefined, sawInput: false };
        if (typeof block['text'] === 'string' && block['text'] !== '') out.push(textPart(block['text']));
        return;
      case 'thinking':
        this.#block = { index, kind: 'thinking', startInput: undefined, sawInput: false };
        if (typeof block['thinking'] === 'string' && block['thinking'] !== '') out.push(thinkPart(block['thinking']));
        return;
      case 'redacted_thinking':
        this.#block = { index, kind: 'ignored', startInput: undefined, sawInput: false };
        if (typeof block['data'] === 'string') out.push(redactedThinkPart(block['data']));
        return;
      case 'tool_use': {
        const { id, name } = block;
        if (typeof id !== 'string' || id === '' || typeof name !== 'string' || name === '') {
          throw new ChatProviderError(`The server sent a tool_use block without an id or a name: ${preview(block)}`);
        }
        this.#block = { index, kind: 'tool_use', startInput: block['input'], sawInput: false };
        out.push(toolCall(id, name, null));
        return;
      }
      default:
        this.#block = { index, kind: 'ignored', startInput: undefined, sawInput: false };
        return;
    }
  }

  /** The parts of a content block that came whole (in `message_start`), as its start, deltas and stop would give them. */
  #completeBlock(block: JsonRecord, out: StreamedMessagePart[]): void {
    switch (block['type']) {
      case 'text':
        if (typeof block['text'] === 'string' && block['text'] !== '') out.push(textPart(block['text']));
        return;
      case 'thinking': {
        const thinking = typeof block['thinking'] === 'string' ? block['thinking'] : '';
        const signature = typeof block['signature'] === 'string' && block['signature'] !== '' ? block['signature'] : undefined;
        if (signature !== undefined) out.push(thinkPart(thinking, signature));
        else if (thinking !== '') out.push(thinkPart(thinking));
        return;
      }
      case 'redacted_thinking':
        if (typeof block['data'] === 'string') out.push(redactedThinkPart(block['data']));
        return;
      case 'tool_use': {
        const { id, name } = block;
        if (typeof id !== 'string' || id === '' || typeof name !== 'string' || name === '') {
          throw new ChatProviderError(`The server sent a tool_use block without an id or a name: ${preview(block)}`);
        }
        out.push(toolCall(id, name, null));
        if (hasKeys(block['input'])) out.push(toolCallPart(JSON.stringify(block['input'])));
        return;
      }
      default:
        return; // server tool blocks and blocks newer than this code
    }
  }

  #stop(data: JsonRecord, out: StreamedMessagePart[]): void {
    const block = this.#open(data);
    this.#block = undefined;
    // A server that sends the whole input with the start event and no deltas (the API never does).
    if (block.kind === 'tool_use' && !block.sawInput && hasKeys(block.startInput)) out.push(toolCallPart(JSON.stringify(block.startInput)));
  }

  /** The open block the event is about. */
  #open(data: JsonRecord): OpenBlock {
    const block = this.#block;
    if (block === undefined || block.index !== data['index']) {
      throw new ChatProviderError(`The server sent ${String(data['type'])} for content block ${preview(data['index'])}, which is not open`);
    }
    return block;
  }
}

function asRecord(value: unknown): JsonRecord | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as JsonRecord) : undefined;
}

function hasKeys(value: unknown): boolean {
  const record = asRecord(value);
  return record !== undefined && Object.keys(record).length > 0;
}

function preview(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
