
/** How long what is left of a body after the end of its stream is read before the request is closed, in ms. */
export const REST_MS = 500;

/** How much of what is left of a body after the end of its stream is read before the request is closed, in bytes. */
export const REST_BYTES = 1024 * 1024;

/**
 * Reads and drops what is left of a response body after its stream's end event (`message_stop`,
 * `data: [DONE]`, `response.completed`), in the background: nothing of it is parsed, and for the
 * stream's reader the stream is over at once. A body that ends soon — the usual case, the end of the
 * HTTP response comes right after the end event — leaves its connection to be used again by the next
 * request (closing the request at once would often throw the connection away). One that goes on —
 * a server that holds the connection open, or sends more (a second message) — has its request closed
 * with `close` after {@link REST_MS} or {@link REST_BYTES}, whichever comes first. `close` is called
 * once in any case when the reading is over (a no-op for a request whose body ended).
 */
export function dropRest(reader: ReadableStreamDefaultReader<Uint8Array>, close: () => void): void {
  let closed = false;
  const closeOnce = (): void => {
    if (closed) return;
    closed = true;
    close();
  };
  const timer = setTimeout(closeOnce, REST_MS);
  timer.unref();
  void (async () => {
    let bytes = 0;
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        bytes += value.byteLength;
        if (bytes > REST_BYTES) return;
      }
    } catch {
      // the request was closed, or the connection broke: nothing was waiting for this
    } finally {
      clearTimeout(timer);
      closeOnce();
    }
  })();
}
