import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A server of another origin, for the redirect tests of provider packages: what it got, and how to stop it. */
export interface OtherOriginServer {
  readonly server: Server;
  /** Its base URL (`http://127.0.0.2:<port>`). */
  readonly url: string;
  /** The headers of each request it got, in order. */
  readonly received: IncomingHttpHeaders[];
}

/**
 * Starts a server on 127.0.0.2 — another origin than a test server on 127.0.0.1 — that records the
 * headers of each request and answers 404 with `errorBody` (JSON): where a provider must never send
 * its credentials after a redirect.
 */
export async function otherOriginServer(errorBody: string): Promise<OtherOriginServer> {
  const received: IncomingHttpHeaders[] = [];
  const server = createServer((request, response) => {
    received.push(request.headers);
    request.resume();
    request.once('end', () => {
      response.writeHead(404, { 'content-type': 'application/json' });
      response.end(errorBody);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.2', resolve));
  return { server, url: `http://127.0.0.2:${(server.address() as AddressInfo).port}`, received };
}

/** A test server's reply that redirects with `status` to `base` followed by the request's path. */
export function redirectTo(status: number, base: string): (request: { readonly path: string }, response: ServerResponse) => void {
  return (request, response) => {
    response.writeHead(status, { location: `${base}${request.path}` });
    response.end();
  };
}
