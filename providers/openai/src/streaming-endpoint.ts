import type { FinishReason, JsonValue, StreamedMessagePart, TokenUsage } from '@kosong/core';
import type OpenAI from 'openai';
import type { APIPromise } from 'openai';
import type { ChatCompletionCreateParamsStreaming } from 'openai/resources/chat/completions';

/**
 * A streaming API of the `openai` SDK that a {@link ChatCompletionsConnection} sends requests to:
 * Chat Completions ({@link CHAT_COMPLETIONS_ENDPOINT}) or Responses (`RESPONSES_ENDPOINT`).
 */
export interface StreamingEndpoint {
  /** The API's name, for messages: `Chat Completions`, `Responses`. */
  readonly name: string;
  /** What a complete stream ends with, for the error when it does not: `finish_reason`, `response.completed`. */
  readonly endMarker: string;
  /** Sends a streamed request with the SDK (the connection reads the response itself). */
  send(client: OpenAI, body: Record<string, JsonValue>, options: StreamingRequestOptions): APIPromise<unknown>;
}

/** The SDK request options a connection sets on each request. */
export interface StreamingRequestOptions {
  readonly signal: AbortSignal;
  readonly maxRetries: number;
  readonly timeout?: number;
  /** `fetch` options of this request (`redirect: 'manual'` for a client the provider did not make). */
  readonly fetchOptions?: { readonly redirect: 'manual' };
}

/** Turns the parsed events of one stream into kosong parts (a `ChunkConverter`, a `ResponsesEventConverter`). */
export interface StreamConverter {
  /** The message id, once known. */
  readonly id: string | undefined;
  /** The usage, once known. */
  readonly usage: TokenUsage | undefined;
  /** Why the response ended; `undefined` until it did (a stream that ends without one was cut). */
  readonly finishReason: FinishReason | undefined;
  /**
   * Whether the response is complete with nothing more to come (Responses: `response.completed`):
   * the stream then reads no further. Left out, the stream reads to `data: [DONE]` or the end of the body.
   */
  readonly complete?: boolean;
  /** Takes the response headers, once, before the first event (e.g. for the request id of an error event). */
  begin?(headers: Headers): void;
  /** Reads one event (a parsed `data` object); writes the parts it releases to `out`. */
  push(event: unknown, out: StreamedMessagePart[]): void;
  /** The stream ended: writes what was held back to `out`. */
  end(out: StreamedMessagePart[]): void;
}

/** `POST /chat/completions` with `client.chat.completions.create`. */
export const CHAT_COMPLETIONS_ENDPOINT: StreamingEndpoint = {
  name: 'Chat Completions',
  endMarker: 'finish_reason',
  send: (client, body, options) => client.chat.completions.create(body as unknown as ChatCompletionCreateParamsStreaming, options),
};
