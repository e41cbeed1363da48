import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Who sends a request: the tenant id it runs as, or `undefined` when the request is not
 * authenticated (the handler answers 401). Called for every request that reaches a route, before its
 * body is read. A throw or a rejection is a 500, never an authenticated request.
 */
export type Authenticate = (request: Request) => string | undefined | Promise<string | undefined>;

/** One API key of {@link apiKeyAuth}: the SHA-256 of the key (hex), never the key itself, and its tenant. */
export interface ApiKeyEntry {
  /** The key's SHA-256, 64 hex digits ({@link hashApiKey} computes it). */
  readonly sha256: string;
  /** The tenant the key runs as (a tenant of the kernel). */
  readonly tenant: string;
}

/**
 * The SHA-256 of an API key, in hex: what {@link apiKeyAuth} keeps instead of the key. Run it once
 * where the key is made, and store only its result.
 */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/**
 * The API key a request presents: `Authorization: Bearer <key>`, else `x-api-key: <key>`;
 * `undefined` when it has neither (or an empty one).
 */
export function presentedApiKey(request: Request): string | undefined {
  const authorization = request.headers.get('authorization');
  if (authorization !== null) {
    const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization);
    return match?.[1];
  }
  const header = request.headers.get('x-api-key');
  return header === null || header.trim() === '' ? undefined : header.trim();
}

/**
 * Authentication by API keys mapped to tenants. Only the keys' SHA-256 hashes are kept; the key a
 * request presents (see {@link presentedApiKey}) is hashed and compared with every stored hash in
 * constant time (`crypto.timingSafeEqual`, all of them, whatever matched), so neither the time taken
 * nor the store tells a key's prefix.
 *
 * @throws TypeError when an entry's hash is not 64 hex digits or its tenant is empty.
 */
export function apiKeyAuth(keys: readonly ApiKeyEntry[]): Authenticate {
  const entries = keys.map((entry, index) => {
    if (typeof entry.sha256 !== 'string' || !/^[0-9a-f]{64}$/i.test(entry.sha256)) {
      throw new TypeError(`apiKeyAuth: keys[${index}].sha256 must be the key's SHA-256 in hex (64 digits; hashApiKey(key) computes it)`);
    }
    if (typeof entry.tenant !== 'string' || entry.tenant === '') throw new TypeError(`apiKeyAuth: keys[${index}].tenant must be a non-empty string`);
    return { digest: Buffer.from(entry.sha256.toLowerCase(), 'hex'), tenant: entry.tenant };
  });
  return (request) => {
    const key = presentedApiKey(request);
    if (key === undefined) return undefined;
    const digest = createHash('sha256').update(key, 'utf8').digest();
    let tenant: string | undefined;
    for (const entry of entries) {
      if (timingSafeEqual(entry.digest, digest) && tenant === undefined) tenant = entry.tenant;
    }
    return tenant;
  };
}
