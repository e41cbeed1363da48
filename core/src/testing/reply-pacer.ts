import type { ServerResponse } from 'node:http';

/** How a test server streams events: when, how fast, and how it ends. */
export interface EventStreamPacing {
  /** Wait before the response headers, in ms. */
  readonly headerDelayMs?: number | undefined;
  /** Wait before each event, in ms. Without it, events are written in 64 KiB batches (fast). */
  readonly eventDelayMs?: number | undefined;
  /**
   * What happens after the events: `end` (default) ends the response, `destroy` cuts the connection
   * without ending it (a disconnect mid-stream), `hang` keeps it open and silent until the client leaves.
   */
  readonly then?: 'end' | 'destroy' | 'hang' | undefined;
}

const BATCH_CHARS = 64 * 1024;

/**
 * The timing side of the providers' local test servers (`@kosong/core/testing`): waits that end
 * when the client leaves or the server closes, and event streams written with back-pressure, in
 * batches or one event at a time. One per server; {@link ReplyPacer.close} when the server closes.
 */
export class ReplyPacer {
  readonly #timers = new Set<NodeJS.Timeout>();

  /**
   * Writes `headers` (status 200) and then `events`, paced as `pacing` says; returns early when the
   * client goes away.
   */
  async stream(response: ServerResponse, headers: Readonly<Record<string, string>>, events: Iterable<string>, pacing: EventStreamPacing): Promise<void> {
    if (pacing.headerDelayMs !== undefined && !(await this.sleep(pacing.headerDelayMs, response))) return;
    response.writeHead(200, headers);
    response.flushHeaders();
    if (pacing.eventDelayMs === undefined) {
      let batch = '';
      for (const event of events) {
        batch += event;
        if (batch.length >= BATCH_CHARS) {
          if (!(await writeChunk(response, batch))) return;
          batch = '';
        }
      }
      if (batch !== '' && !(await writeChunk(response, batch))) return;
    } else {
      for (const event of events) {
        if (!(await this.sleep(pacing.eventDelayMs, response))) return;
        if (!(await writeChunk(response, event))) return;
      }
    }
    switch (pacing.then ?? 'end') {
      case 'end':
        response.end();
        return;
      case 'destroy':
        await new Promise((resolve) => setImmediate(resolve)); // let the written events reach the client first
        response.socket?.destroy();
        return;
      case 'hang':
        return;
    }
  }

  /** Waits `ms`, unless the response closes first or the pacer is closed; resolves whether to go on. */
  sleep(ms: number, response: ServerResponse): Promise<boolean> {
    return new Promise((resolve) => {
      const onClose = (): void => {
        clearTimeout(timer);
        this.#timers.delete(timer);
        resolve(false);
      };
      const timer = setTimeout(() => {
        this.#timers.delete(timer);
        response.off('close', onClose);
        resolve(!response.destroyed);
      }, ms);
      this.#timers.add(timer);
      response.once('close', onClose);
    });
  }

  /** Cancels every pending wait (their responses are being closed with the server). */
  close(): void {
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
  }
}

/** Writes `data`, waiting for `drain` when the socket is full; resolves `false` if the response closed. */
export function writeChunk(response: ServerResponse, data: string | Uint8Array): Promise<boolean> {
  if (response.destroyed) return Promise.resolve(false);
  if (response.write(data)) return Promise.resolve(true);
  return new Promise((resolve) => {
    const settle = (ok: boolean) => (): void => {
      response.off('drain', onDrain);
      response.off('close', onClose);
      resolve(ok);
    };
    const onDrain = settle(true);
    const onClose = settle(false);
    response.once('drain', onDrain);
    response.once('close', onClose);
  });
}
