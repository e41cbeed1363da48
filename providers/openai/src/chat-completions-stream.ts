import type { StreamedMessagePart } from '@kosong/core';
import { APIConnectionError, ChatProviderError, EventStream, SseJsonDecoder, type FinishReason, type Secrets, type StreamEventConverter, type TokenUsage } from '@kosong/core/provider-kit';
import { createParser } from 'eventsource-parser';

import { convertError } from './convert-error.js';
import { CHAT_COMPLETIONS_ENDPOINT, type StreamConverter, type StreamingEndpoint } from './streaming-endpoint.js';

/** What a {@link ChatCompletionsStream} needs besides the response body. */
export interface ChatCompletionsStreamOptions {
  readonly converter: StreamConverter;
  /** The API the response comes from (for messages). */
  readonly endpoint?: Pick<StreamingEndpoint, 'name' | 'endMarker'>;
  /** The response headers (`x-trace-id`; the SDK error of an `error` chunk carries them). */
  readonly headers: Headers;
  /** The caller's signal: when it aborts, the stream throws its reason. */
  readonly signal: AbortSignal | undefined;
  /** Longest wait for the next bytes before the request is aborted with an `APITimeoutError`. */
  readonly idleTimeoutMs: number;
  /** Aborts the HTTP request with a reason (the idle timeout, and an early end of the iteration, use it). */
  readonly abortRequest: (reason: unknown) => void;
  /** Secrets to redact from errors. */
  readonly secrets: () => Secrets;
}

/**
 * A `StreamedMessage` over the body of one streamed Chat Completions response (or Responses
 * response, with that endpoint and a `ResponsesEventConverter`). The `openai` SDK sends the request
 * and maps its failures; the body of a successful response is read with the provider kit
 * (`readEventStream` over an `SseJsonDecoder` with `eventsource-parser`), at a fraction of what the
 * SDK's own stream costs. It can be iterated once.
 *
 * It throws the caller's abort reason when the signal aborts, an `APITimeoutError` when the server
 * stays silent for the idle timeout, an {@link APIConnectionError} when the connection breaks or the
 * response ends without a `finish_reason` (its endpoint's end marker), and a {@link ChatProviderError}
 * for malformed data, an `error` chunk (an `APIStatusError` when its code stands for a status), or a
 * body with no event at all that was not declared an event stream. Stopping the iteration early
 * cancels the HTTP request. Nothing is parsed after `data: [DONE]` or a complete response
 * (`response.completed`): the stream is over there, even if the server keeps the connection open;
 * the rest of the body is dropped in the background and the request closed if it goes on (`dropRest`).
 */
export class ChatCompletionsStream extends EventStream {
  constructor(body: ReadableStream<Uint8Array>, options: ChatCompletionsStreamOptions) {
    const endpoint = options.endpoint ?? CHAT_COMPLETIONS_ENDPOINT;
    options.converter.begin?.(options.headers);
    super(
      {
        body,
        signal: options.signal,
        idleTimeoutMs: options.idleTimeoutMs,
        abortRequest: options.abortRequest,
        convertError: (error) => convertError(error, { secrets: options.secrets() }),
        what: `A ${endpoint.name} stream`,
        traceId: options.headers.get('x-trace-id') ?? undefined,
      },
      new EndpointEvents(options.converter, endpoint, options.headers).decoder,
    );
  }
}

/** An endpoint's converter, with the rule for a body that ends without the endpoint's end marker. */
class EndpointEvents implements StreamEventConverter {
  readonly decoder: SseJsonDecoder;

  constructor(
    private readonly converter: StreamConverter,
    private readonly endpoint: Pick<StreamingEndpoint, 'name' | 'endMarker'>,
    private readonly headers: Headers,
  ) {
    this.decoder = new SseJsonDecoder(this, { createParser });
  }

  get id(): string | undefined {
    return this.converter.id;
  }

  get usage(): TokenUsage | undefined {
    return this.converter.usage;
  }

  get finishReason(): FinishReason | undefined {
    return this.converter.finishReason;
  }

  get complete(): boolean | undefined {
    return this.converter.complete;
  }

  push(event: unknown, out: StreamedMessagePart[]): void {
    this.converter.push(event, out);
  }

  /** @throws for a body that ended without a finish reason: not an event stream at all, or one cut short. */
  end(out: StreamedMessagePart[]): void {
    if (this.converter.finishReason === undefined) {
      const contentType = this.headers.get('content-type');
      if (this.decoder.events === 0 && contentType !== null && !/^\s*text\/event-stream\b/i.test(contentType)) {
        throw new ChatProviderError(`The server answered with content type "${contentType}" and sent no event: it is not a ${this.endpoint.name} event stream`);
      }
      throw new APIConnectionError(`The stream ended before the response was complete (no ${this.endpoint.endMarker} was sent)`);
    }
    this.converter.end(out);
  }
}
