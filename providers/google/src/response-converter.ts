import { randomUUID } from 'node:crypto';

import {
  APIConnectionError,
  APIStatusError,
  audioURLPart,
  ChatProviderError,
  imageURLPart,
  textPart,
  thinkPart,
  toolCall,
  type FinishReason,
  type JsonObject,
  type StreamedMessagePart,
  type TokenUsage,
} from '@kosong/core';

import { normalizeFinishReason } from './finish-reason.js';
import { THOUGHT_SIGNATURE_KEY } from './thought-signature.js';
import { usageFromMetadata } from './usage.js';

/**
 * Turns the events of a streamed `generateContent` response (each a `GenerateContentResponse` as
 * JSON) into kosong parts, and keeps what the response says about itself: its id, usage and finish
 * reason. Only the first candidate is read (kosong asks for one).
 *
 * Parts (kosong spec §7.6):
 * - `{ text, thought: true }` → a think part; `{ text }` → a text part (empty texts are dropped);
 * - `{ functionCall: { name, args, id? } }` → a complete tool call: id = the API's id when it sends
 *   one, else `<name>_<uuid>`; arguments = `args` as JSON (`{}` when absent); a `thoughtSignature`
 *   on the part is kept in `extras.thought_signature_b64` so it goes back with the call;
 * - `{ inlineData }` with an image or audio type → an image or audio part with a `data:` URL;
 * - any other part (code execution, a kind added later) is skipped.
 *
 * It throws a {@link ChatProviderError} for data that is not a response (not an object, a function
 * call without a name, arguments that are not an object), an {@link APIStatusError} for an `error`
 * event with an HTTP status code, and a {@link ChatProviderError} when the prompt was blocked.
 * It is the provider kit's `StreamEventConverter` of `streamGenerateContent`.
 */
export class ResponseConverter {
  #id: string | undefined;
  #usage: TokenUsage | undefined;
  #rawFinishReason: string | undefined;
  #calledFunctions = false;

  /** The response id (`responseId`), once an event carried it. */
  get id(): string | undefined {
    return this.#id;
  }

  /** The latest usage the stream reported (each event carries the running total). */
  get usage(): TokenUsage | undefined {
    return this.#usage;
  }

  /** Why the model stopped, once the response said. */
  get finishReason(): FinishReason | undefined {
    return this.#rawFinishReason === undefined ? undefined : normalizeFinishReason(this.#rawFinishReason, this.#calledFunctions);
  }

  /** Converts one event, appending its parts to `out`. */
  push(event: unknown, out: StreamedMessagePart[]): void {
    if (!isObject(event)) throw new ChatProviderError(`The server sent a stream event that is not a JSON object: ${snippet(event)}`);
    if (event['error'] !== undefined) throw streamError(event['error']);
    const responseId = event['responseId'];
    if (this.#id === undefined && typeof responseId === 'string' && responseId !== '') this.#id = responseId;
    const usage = usageFromMetadata(event['usageMetadata']);
    if (usage !== undefined) this.#usage = usage;
    const candidates = event['candidates'];
    const candidate = Array.isArray(candidates) ? candidates[0] : undefined;
    if (!isObject(candidate)) {
      const feedback = event['promptFeedback'];
      if (isObject(feedback) && typeof feedback['blockReason'] === 'string') throw blockedPrompt(feedback);
      return;
    }
    const content = candidate['content'];
    const parts = isObject(content) ? content['parts'] : undefined;
    if (Array.isArray(parts)) for (const part of parts) this.#convertPart(part, out);
    const reason = candidate['finishReason'];
    if (typeof reason === 'string' && reason !== '') this.#rawFinishReason = reason;
  }

  /**
   * The events are over.
   *
   * @throws {APIConnectionError} when no `finishReason` came: the stream ended before the response was complete.
   */
  end(): void {
    if (this.#rawFinishReason === undefined) throw new APIConnectionError('The stream ended before the response was complete (no finishReason was sent)');
  }

  #convertPart(part: unknown, out: StreamedMessagePart[]): void {
    if (!isObject(part)) return;
    const text = part['text'];
    if (typeof text === 'string') {
      if (text !== '') out.push(part['thought'] === true ? thinkPart(text) : textPart(text));
      return;
    }
    const call = part['functionCall'];
    if (call !== undefined) {
      out.push(this.#toolCall(call, part['thoughtSignature']));
      return;
    }
    const inline = part['inlineData'];
    if (isObject(inline) && typeof inline['mimeType'] === 'string' && typeof inline['data'] === 'string') {
      const url = `data:${inline['mimeType']};base64,${inline['data']}`;
      if (inline['mimeType'].startsWith('image/')) out.push(imageURLPart(url));
      else if (inline['mimeType'].startsWith('audio/')) out.push(audioURLPart(url));
    }
  }

  #toolCall(call: unknown, signature: unknown): StreamedMessagePart {
    if (!isObject(call) || typeof call['name'] !== 'string' || call['name'] === '') {
      throw new ChatProviderError(`The server sent a function call without a name: ${snippet(call)}`);
    }
    const name = call['name'];
    const args = call['args'];
    if (args !== undefined && args !== null && !isObject(args)) {
      throw new ChatProviderError(`The server sent arguments of function "${name}" that are not a JSON object: ${snippet(args)}`);
    }
    this.#calledFunctions = true;
    const id = typeof call['id'] === 'string' && call['id'] !== '' ? call['id'] : `${name}_${randomUUID()}`;
    const extras: JsonObject | undefined = typeof signature === 'string' && signature !== '' ? { [THOUGHT_SIGNATURE_KEY]: signature } : undefined;
    return toolCall(id, name, args === undefined || args === null ? '{}' : JSON.stringify(args), extras);
  }
}

/** An `error` event in the stream: an {@link APIStatusError} when it has an HTTP status code. */
function streamError(error: unknown): ChatProviderError {
  const fields = isObject(error) ? error : {};
  const message = typeof fields['message'] === 'string' ? fields['message'] : snippet(error);
  const status = typeof fields['status'] === 'string' ? `${fields['status']}: ` : '';
  const code = fields['code'];
  if (typeof code === 'number' && Number.isInteger(code) && code >= 400 && code < 600) {
    return new APIStatusError(code, `The stream failed: ${status}${message}`);
  }
  return new ChatProviderError(`The stream failed: ${status}${message}`);
}

function blockedPrompt(feedback: Record<string, unknown>): ChatProviderError {
  const detail = typeof feedback['blockReasonMessage'] === 'string' ? `: ${feedback['blockReasonMessage']}` : '';
  return new ChatProviderError(`Gemini blocked the prompt (${String(feedback['blockReason'])})${detail}`);
}

/** Whether `value` is a plain JSON object (not null, not an array). */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** At most 200 characters of a value, for error messages. */
export function snippet(value: unknown): string {
  let text: string;
  try {
    text = typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
  } catch {
    text = String(value);
  }
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
