import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';

/** One request a test server received. */
export interface RecordedRequest {
  readonly method: string;
  /** The path and query, e.g. `/v1/chat/completions`. */
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  /** The body as received. */
  readonly rawBody: string;
  /** The body parsed as JSON; `undefined` when it is not JSON. */
  readonly body: unknown;
  /**
   * Settles when the exchange is over: `completed` when the server finished its response, `aborted`
   * when the connection closed before that (the client went away, or the reply cut it).
   */
  readonly closed: Promise<'completed' | 'aborted'>;
}

/** Reads the whole body of `request` and records it, with a promise of how `response` ends. */
export async function recordRequest(request: IncomingMessage, response: ServerResponse): Promise<RecordedRequest> {
  const closed = new Promise<'completed' | 'aborted'>((resolve) => {
    response.once('close', () => resolve(response.writableFinished ? 'completed' : 'aborted'));
  });
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const rawBody = Buffer.concat(chunks).toString('utf8');
  let body: unknown;
  try {
    body = JSON.parse(rawBody) as unknown;
  } catch {
    body = undefined;
  }
  return { method: request.method ?? '', path: request.url ?? '', headers: request.headers, rawBody, body, closed };
}
