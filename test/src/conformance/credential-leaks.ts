/**
 * Conformance checks every provider over HTTP should pass: its API key is never reachable from an
 * error it throws, even when the server echoes the credentials it received back in its response
 * headers and body (as some proxies and gateways do); and no credential goes to another origin when
 * the server redirects there (the provider fails, not retried, and the other origin gets no key).
 * A provider joins with one call in its adapter file: `credentialLeakSuite({ name, create })`.
 *
 * @module
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import { APIStatusError, ChatProviderError, isRetryableError, type ChatProvider, type Message } from '@kosong/core';
import { expect } from 'chai';

import { secretLeaks } from '../secret-leaks.js';

/** How to build the provider under test. */
export interface CredentialLeakAdapter {
  readonly name: string;
  /** The provider with this API key, sending its requests to `baseURL` (a server on 127.0.0.1). */
  create(options: { readonly baseURL: string; readonly apiKey: string }): ChatProvider;
}

/** Request headers that carry credentials, in the providers' APIs. */
const CREDENTIAL_HEADERS = ['authorization', 'api-key', 'x-api-key', 'x-goog-api-key', 'proxy-authorization'];
const KEY = 'sk-echo-3f8a1c9e7b2d4f6a0c5e';
const history: readonly Message[] = [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }];

/** Everything credential-like in a request: its credential headers and the query's `key`. */
function credentialsOf(request: IncomingMessage): Record<string, string> {
  const found: Record<string, string> = {};
  for (const name of CREDENTIAL_HEADERS) {
    const value = request.headers[name];
    if (typeof value === 'string') found[name] = value;
  }
  const key = new URL(request.url ?? '/', 'http://x').searchParams.get('key');
  if (key !== null) found['key'] = key;
  return found;
}

/** A server on `host` that records what credentials each request to it carried, and answers 404. */
async function recordingServer(host: string): Promise<{ readonly server: Server; readonly url: string; readonly received: Record<string, string>[] }> {
  const received: Record<string, string>[] = [];
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    received.push(credentialsOf(request));
    request.resume();
    request.once('end', () => {
      response.writeHead(404, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: { message: 'the other origin', type: 'not_found', code: 404, status: 'NOT_FOUND' } }));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve());
  });
  return { server, url: `http://${host}:${(server.address() as AddressInfo).port}`, received };
}

/** Answers every request with a redirect (`status`, `location`: `target` and the request's path). */
async function redirectingServer(status: number, target: string): Promise<{ readonly server: Server; readonly url: string; readonly hits: () => number }> {
  let hits = 0;
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    hits++;
    request.resume();
    request.once('end', () => {
      response.writeHead(status, { location: `${target}${request.url ?? '/'}`, 'content-type': 'text/plain' });
      response.end('moved');
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits: () => hits };
}

async function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
}

/** Where the server echoes the credentials it received. */
type Echo = 'headers' | 'headers and body';

/** Answers every request with `status`, echoing its credentials in headers (as they are and prefixed), and in the body. */
function echoingServer(status: number, echo: Echo): Promise<Server> {
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    request.resume();
    request.once('end', () => {
      const credentials = credentialsOf(request);
      const echoed = Object.entries(credentials).flatMap(([name, value]) => [[name, value], [`x-echo-${name}`, value]]);
      const text = Object.entries(credentials).map(([name, value]) => `${name}: ${value}`).join('; ');
      const message = echo === 'headers' ? 'invalid credentials' : `invalid credentials (${text})`;
      response.writeHead(status, [['content-type', 'application/json'], ['x-request-id', 'req-echo'], ...echoed].flat());
      // A body most SDKs read their error from: OpenAI/Anthropic-style `error.message`, Google-style `error.status`.
      response.end(JSON.stringify({ type: 'error', error: { message, type: 'authentication_error', code: status, status: 'UNAUTHENTICATED', ...(echo === 'headers' ? {} : { echo: credentials }) } }));
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

/** The error of one `generate` (and reading its stream, should the error come there). */
async function failure(provider: ChatProvider): Promise<unknown> {
  try {
    const stream = await provider.generate('You are terse.', [], history);
    for await (const part of stream) void part;
  } catch (error) {
    return error;
  }
  return expect.fail('expected the request to fail');
}

/** Registers the check for one provider. */
export function credentialLeakSuite(adapter: CredentialLeakAdapter): void {
  describe(`ChatProvider conformance: ${adapter.name} leaks no API key in its errors`, () => {
    const cases: [number, Echo][] = [[401, 'headers'], [401, 'headers and body'], [403, 'headers'], [500, 'headers and body']];
    for (const [status, echo] of cases) {
      it(`a ${status} whose response echoes the credentials in its ${echo}: no form of the key is reachable from the error`, async () => {
        const server = await echoingServer(status, echo);
        try {
          const { port } = server.address() as AddressInfo;
          const error = await failure(adapter.create({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: KEY }));
          expect(ChatProviderError.isInstance(error), String(error)).to.equal(true);
          expect(APIStatusError.isInstance(error) && error.statusCode).to.equal(status);
          expect(secretLeaks(error, KEY)).to.deep.equal([]);
          expect((error as Error).message).to.include('invalid credentials');
        } finally {
          server.closeAllConnections();
          await new Promise((resolve) => server.close(resolve));
        }
      });
    }
  });

  describe(`ChatProvider conformance: ${adapter.name} sends no credential to another origin on a redirect`, () => {
    // 127.0.0.2 is loopback too, but another origin than 127.0.0.1: what a redirect to an attacker's host looks like
    for (const status of [301, 302, 303, 307, 308]) {
      it(`a ${status} to another origin is not followed with the key: the request fails (not retried), the other origin gets no credential`, async () => {
        const other = await recordingServer('127.0.0.2');
        const redirecting = await redirectingServer(status, other.url);
        try {
          const error = await failure(adapter.create({ baseURL: `${redirecting.url}/v1`, apiKey: KEY }));
          expect(redirecting.hits()).to.equal(1);
          expect(other.received.filter((credentials) => Object.keys(credentials).length > 0), 'credentials the other origin received').to.deep.equal([]);
          expect(ChatProviderError.isInstance(error), String(error)).to.equal(true);
          expect(isRetryableError(error), `retryable: ${String(error)}`).to.equal(false);
          expect((error as Error).message).to.match(/redirect/i);
          expect((error as Error).message).to.include(other.url);
          expect(secretLeaks(error, KEY)).to.deep.equal([]);
        } finally {
          await Promise.all([closeServer(redirecting.server), closeServer(other.server)]);
        }
      });
    }
  });
}
