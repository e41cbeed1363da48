/**
 * A bound on the size of one message a server sends, so a server cannot make the client hold an
 * arbitrarily large message in memory.
 *
 * Over stdio the SDK bounds its read buffer itself (10 MiB, not configurable) and closes the
 * connection when a message is larger; over HTTP it reads a whole response (or a whole SSE event)
 * whatever its size, so the toolset's `fetch` counts the bytes of each JSON response and of each
 * SSE event and fails the stream past the limit.
 *
 * @module
 */
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { errorMarker, hasErrorMarker, markError } from '@kosong/core/toolset-kit';

/** The default bound of one message, in bytes: 10 MiB, the SDK's own bound over stdio. */
export const MCP_MAX_MESSAGE_BYTES = 10 * 1024 * 1024;

const MESSAGE_TOO_LARGE = errorMarker('McpMessageTooLargeError');

/** A server sent a message larger than the client accepts; the connection is given up. */
export class McpMessageTooLargeError extends Error {
  constructor(
    /** The bound that was crossed, in bytes. */
    readonly maxBytes: number,
  ) {
    super(`the server sent a message larger than ${maxBytes} bytes (the client's limit); the connection was given up`);
    this.name = 'McpMessageTooLargeError';
    markError(this, MESSAGE_TOO_LARGE);
  }

  /** Whether `error` is an {@link McpMessageTooLargeError} (works across duplicated package copies). */
  static isInstance(error: unknown): error is McpMessageTooLargeError {
    return hasErrorMarker(error, MESSAGE_TOO_LARGE);
  }
}

/** The SDK's stdio transport reports its full read buffer with an error whose message says so. @internal */
export function isStdioBufferOverflow(error: Error): boolean {
  return /ReadBuffer exceeded maximum size/.test(error.message);
}

/**
 * A `fetch` whose response bodies fail with an {@link McpMessageTooLargeError} (also given to
 * `onTooLarge`) once one message crosses `maxBytes`: a whole body, or one event of an SSE stream
 * (events end at a blank line). @internal
 */
export function limitedFetch(maxBytes: number, onTooLarge: (error: McpMessageTooLargeError) => void, inner: FetchLike = fetch): FetchLike {
  return async (url, init) => {
    const response = await inner(url, init);
    if (!response.body) return response;
    const eventStream = (response.headers.get('content-type') ?? '').includes('text/event-stream');
    let size = 0;
    let afterNewline = false;
    /** Counts the chunk's bytes; whether the message being read crossed the bound. */
    const crosses = (chunk: Uint8Array): boolean => {
      if (!eventStream) {
        size += chunk.byteLength;
        return size > maxBytes;
      }
      for (let i = 0; i < chunk.byteLength; i++) {
        const byte = chunk[i]!;
        if (byte === 10) {
          if (afterNewline) size = 0; // a blank line: the event ended
          afterNewline = true;
        } else if (byte !== 13) {
          afterNewline = false;
          if (++size > maxBytes) return true;
        }
      }
      return false;
    };
    const limiter = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        if (crosses(chunk)) {
          const error = new McpMessageTooLargeError(maxBytes);
          onTooLarge(error);
          controller.error(error);
          return;
        }
        controller.enqueue(chunk);
      },
    });
    return new Response(response.body.pipeThrough(limiter), { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}
