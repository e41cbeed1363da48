import { randomUUID } from 'node:crypto';

import {
  ChatProviderError,
  textPart,
  thinkPart,
  toolCall,
  toolCallPart,
  type FinishReason,
  type StreamedMessagePart,
  type TokenUsage,
} from '@kosong/core';

import { OutputItemSequencer, type OutputItemKey } from './responses-output-sequencer.js';
import { streamError, type ResponseIds } from './stream-error.js';
import { usageFromResponse } from './responses-usage.js';

type JsonRecord = Record<string, unknown>;

/** How a {@link ResponsesEventConverter} reads events. */
export interface ResponsesEventConverterOptions {
  /** Id for a function call that came without a `call_id`; default: a random UUID. */
  readonly generateId?: () => string;
}

/**
 * Turns the events of a streamed Responses API response into kosong parts, and remembers the
 * response id, usage and finish reason (kosong spec §7.4):
 *
 * - `response.output_text.delta` (and `response.refusal.delta`) → text parts;
 * - `response.output_item.added` of a `function_call` → a tool call (`call_id`, name, arguments so
 *   far), `response.function_call_arguments.delta` → its argument fragments;
 * - `response.reasoning_summary_part.added` → an empty think part (a second summary of the same item
 *   starts with a blank line), `response.reasoning_summary_text.delta` and `response.reasoning_text.delta`
 *   → think parts; `response.output_item.done` of a `reasoning` item → an empty think part with its
 *   `encrypted_content`, which closes the item's think part so it goes back as it came;
 * - `response.completed` → usage and finish reason (`tool_calls` when the response called a
 *   function, else `stop`); `response.incomplete` → usage and `length` (`max_output_tokens`),
 *   `content_filter`, or `other`; `response.failed` and `error` (its error nested under `error` as
 *   the API sends it, or flat on the event as its reference shows it; also a bare `{error}` object
 *   from a gateway) → thrown errors: an `APIStatusError` when the code stands for a status
 *   (`rate_limit_exceeded` → 429, `server_error` → 500, …), else an `OpenAIStreamError` naming it.
 *
 * The message id is the response's id (`response.created`), not an item's. Parts of different
 * output items never interleave ({@link OutputItemSequencer}). An item whose content came only with
 * its `response.output_item.done` (or only in the final response, from servers that stream no items)
 * still gives its parts. Events after the end, and event types it does not know, are ignored.
 */
export class ResponsesEventConverter {
  /** The response id. */
  id: string | undefined;
  /** The usage, from the final response. */
  usage: TokenUsage | undefined;
  /** Why the response ended, once it did. */
  finishReason: FinishReason | undefined;
  readonly #sequencer = new OutputItemSequencer();
  /** `item_id` → `output_index`, for events that carry only the item id. */
  readonly #keys = new Map<string, number>();
  /** Function calls (by key) whose arguments began to arrive. */
  readonly #argumentsSeen = new Set<OutputItemKey>();
  readonly #generateId: () => string;
  #calledFunction = false;
  #ids: ResponseIds = {};

  constructor(options: ResponsesEventConverterOptions = {}) {
    this.#generateId = options.generateId ?? randomUUID;
  }

  /** Whether the response ended (`response.completed`, `response.incomplete`): what comes after is not read. */
  get complete(): boolean {
    return this.finishReason !== undefined;
  }

  /** Takes the response headers (before the first event): their request and trace ids go into the errors of the stream. */
  begin(headers: Headers): void {
    this.#ids = { requestId: headers.get('x-request-id') ?? undefined, traceId: headers.get('x-trace-id') ?? undefined };
  }

  /**
   * Reads one event; writes the parts it releases to `out`.
   *
   * @throws {ChatProviderError} (or a subclass) for `response.failed` and `error` events, an event
   * that is not an object, or items that make no sense (a function call without a name, output for an
   * item that was done).
   */
  push(event: unknown, out: StreamedMessagePart[]): void {
    if (this.finishReason !== undefined) return;
    if (!isRecord(event)) throw new ChatProviderError(`The server sent a stream event that is not a JSON object: ${preview(event)}`);
    switch (event['type']) {
      case 'response.output_text.delta':
      case 'response.refusal.delta':
        if (isText(event['delta'])) this.#sequencer.push(this.#keyOf(event), textPart(event['delta']), out);
        return;
      case 'response.function_call_arguments.delta':
        if (isText(event['delta'])) {
          const key = this.#keyOf(event);
          this.#argumentsSeen.add(key);
          this.#sequencer.push(key, toolCallPart(event['delta']), out);
        }
        return;
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_text.delta':
        if (isText(event['delta'])) this.#sequencer.push(this.#keyOf(event), thinkPart(event['delta']), out);
        return;
      case 'response.reasoning_summary_part.added': {
        const later = typeof event['summary_index'] === 'number' && event['summary_index'] > 0;
        this.#sequencer.push(this.#keyOf(event), thinkPart(later ? '\n\n' : ''), out);
        return;
      }
      case 'response.output_item.added':
        this.#itemAdded(event, out);
        return;
      case 'response.output_item.done':
        this.#itemDone(event, out);
        return;
      case 'response.created':
      case 'response.in_progress':
      case 'response.queued':
        this.#readId(event['response']);
        return;
      case 'response.completed':
      case 'response.incomplete':
        this.#ended(event['response'], event['type'] === 'response.incomplete', out);
        return;
      case 'response.failed': {
        const response = isRecord(event['response']) ? event['response'] : {};
        const error = isRecord(response['error']) ? response['error'] : {};
        const message = error['message'] ?? `the response failed (status ${preview(response['status'])})`;
        throw streamError('Responses stream', 'response.failed', { code: error['code'], message }, this.#ids);
      }
      case 'error':
        throw this.#errorEvent(event);
      default:
        // a gateway's bare `{"error": {…}}`, as Chat Completions sends it
        if (event['type'] === undefined && event['error'] !== undefined && event['error'] !== null) throw this.#errorEvent(event);
        return; // content part and `.done` events repeat what the deltas said; other types are not ours
    }
  }

  /** The error of an `error` event: nested (`{type: 'error', error: {type, code, message, param}}`) or flat (`{type: 'error', code, message}`). */
  #errorEvent(event: JsonRecord): ChatProviderError {
    const nested = event['error'];
    return streamError('Responses stream', 'error', nested !== undefined && nested !== null ? nested : { code: event['code'], message: event['message'] }, this.#ids);
  }

  /**
   * The stream ended: writes what was held back to `out`.
   */
  end(out: StreamedMessagePart[]): void {
    this.#sequencer.finish(out);
  }

  #itemAdded(event: JsonRecord, out: StreamedMessagePart[]): void {
    const item = isRecord(event['item']) ? event['item'] : {};
    const key = this.#keyOf(event, item);
    this.#sequencer.add(key);
    if (item['type'] === 'function_call') this.#startCall(key, item, out);
  }

  #itemDone(event: JsonRecord, out: StreamedMessagePart[]): void {
    const item = isRecord(event['item']) ? event['item'] : {};
    const key = this.#keyOf(event, item);
    const seen = this.#sequencer.has(key);
    this.#completeItem(key, item, seen, out);
    this.#sequencer.done(key, out);
  }

  /** Writes what a finished item says that its deltas did not (all of it, for an item never streamed). */
  #completeItem(key: OutputItemKey, item: JsonRecord, streamed: boolean, out: StreamedMessagePart[]): void {
    switch (item['type']) {
      case 'function_call': {
        if (!streamed) this.#startCall(key, item, out);
        const args = item['arguments'];
        if (!this.#argumentsSeen.has(key) && isText(args)) {
          this.#argumentsSeen.add(key);
          this.#sequencer.push(key, toolCallPart(args), out);
        }
        return;
      }
      case 'message':
        if (this.#sequencer.received(key) > 0 || !Array.isArray(item['content'])) return;
        for (const content of item['content'] as unknown[]) {
          if (!isRecord(content)) continue;
          const text = content['type'] === 'output_text' ? content['text'] : content['type'] === 'refusal' ? content['refusal'] : undefined;
          if (isText(text)) this.#sequencer.push(key, textPart(text), out);
        }
        return;
      case 'reasoning': {
        if (this.#sequencer.received(key) === 0 && Array.isArray(item['summary'])) {
          const texts = (item['summary'] as unknown[]).map((summary) => (isRecord(summary) ? summary['text'] : undefined)).filter(isText);
          if (texts.length > 0) this.#sequencer.push(key, thinkPart(texts.join('\n\n')), out);
        }
        const encrypted = item['encrypted_content'];
        if (isText(encrypted)) this.#sequencer.push(key, thinkPart('', encrypted), out);
        return;
      }
      default:
        return;
    }
  }

  #startCall(key: OutputItemKey, item: JsonRecord, out: StreamedMessagePart[]): void {
    const name = item['name'];
    if (!isText(name)) throw new ChatProviderError(`The server sent function call ${preview(item['call_id'] ?? item['id'])} without a name`);
    const callId = isText(item['call_id']) ? item['call_id'] : this.#generateId();
    const args = isText(item['arguments']) ? item['arguments'] : null;
    if (args !== null) this.#argumentsSeen.add(key);
    this.#calledFunction = true;
    this.#sequencer.push(key, toolCall(callId, name, args), out);
  }

  #ended(value: unknown, incomplete: boolean, out: StreamedMessagePart[]): void {
    const response = isRecord(value) ? value : {};
    this.#readId(response);
    this.usage = usageFromResponse(response['usage']);
    // a server that streamed no items at all: the final response holds them
    if (this.#sequencer.empty && Array.isArray(response['output'])) {
      (response['output'] as unknown[]).forEach((item, index) => {
        if (!isRecord(item)) return;
        this.#completeItem(index, item, false, out);
        this.#sequencer.done(index, out);
      });
    }
    this.#sequencer.finish(out);
    this.finishReason = finishReasonOf(response, incomplete, this.#calledFunction);
  }

  #readId(response: unknown): void {
    if (this.id === undefined && isRecord(response) && isText(response['id'])) this.id = response['id'];
  }

  #keyOf(event: JsonRecord, item?: JsonRecord): OutputItemKey {
    const index = event['output_index'];
    const itemId = event['item_id'] ?? item?.['id'];
    if (typeof index === 'number') {
      if (isText(itemId) && item !== undefined) this.#keys.set(itemId, index);
      return index;
    }
    if (isText(itemId)) return this.#keys.get(itemId) ?? itemId;
    return '';
  }
}

/** The finish reason of a final response: by its status and `incomplete_details.reason`. */
function finishReasonOf(response: JsonRecord, incomplete: boolean, calledFunction: boolean): FinishReason {
  if (incomplete || response['status'] === 'incomplete') {
    const details = isRecord(response['incomplete_details']) ? response['incomplete_details'] : {};
    if (details['reason'] === 'max_output_tokens') return 'length';
    if (details['reason'] === 'content_filter') return 'content_filter';
    return 'other';
  }
  return calledFunction ? 'tool_calls' : 'stop';
}

function isRecord(value: unknown): value is JsonRecord {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isText(value: unknown): value is string {
  return typeof value === 'string' && value !== '';
}

function preview(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
