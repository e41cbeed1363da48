import { inspect } from 'node:util';

import { APIStatusError, ChatProviderError } from '@kosong/core';
import { REDACTED_SECRET, redactSecrets, scrubSecrets } from '@kosong/core/provider-kit';
import { expect } from 'chai';

import { secretLeaks } from './secret-leaks.js';

const KEY = 'sk-live-4f9a2b7c1d8e6f3a0b5c';

/** An SDK-like error class whose prototype carries data (the copy must not keep it). */
class LeakyPrototypeError extends Error {}
(LeakyPrototypeError.prototype as unknown as Record<string, unknown>)['lastKey'] = `Bearer ${KEY}`;

/** An SDK-like status error: the key in the message, a header echo, the body, a cause chain, and odd corners. */
function sdkError(): Error {
  const socket = Object.assign(new Error(`write to https://api.test/v1?key=${encodeURIComponent(KEY)} failed`), { code: 'ECONNRESET' });
  const cause = new TypeError('fetch failed', { cause: socket });
  const error = Object.assign(new (class AuthenticationError extends Error {})(`401 Incorrect API key provided: ${KEY}`, { cause }), {
    status: 401,
    headers: new Headers({ 'x-echo-authorization': `Bearer ${KEY}`, 'api-key': KEY, 'x-request-id': 'req-1' }),
    error: { message: 'Incorrect API key', echo: [{ nested: { deeper: `{"apiKey":${JSON.stringify(KEY)}}` } }] },
    map: new Map<string, unknown>([['k', KEY]]),
    set: new Set([KEY]),
    body: Buffer.from(`{"key":"${KEY}"}`),
    bytes: new TextEncoder().encode(KEY),
    url: new URL(`https://api.test/v1/models?key=${KEY}`),
    others: new AggregateError([new LeakyPrototypeError('inner')], 'many'),
  });
  Object.defineProperty(error, 'hidden', { value: { token: KEY }, enumerable: false });
  Object.defineProperty(error, Symbol('request'), { value: { authorization: `Bearer ${KEY}` }, enumerable: false });
  Object.defineProperty(error, 'computed', { get: () => `key=${KEY}`, enumerable: true });
  (error as unknown as Record<string, unknown>)['self'] = error;
  return error;
}

describe('scrubSecrets / redactSecrets (core)', () => {
  it('redactSecrets replaces a secret as it is, URL-encoded and JSON-escaped, and any Bearer token; ignores short and missing secrets', () => {
    const odd = 'pa"ss/wörd+1';
    const text = `${KEY} ${encodeURIComponent(odd)} ${JSON.stringify(odd)} Authorization: Bearer abc.def-123 short`;
    expect(redactSecrets(text, [KEY, odd, 'short', null, undefined])).to.equal(
      `${REDACTED_SECRET} ${REDACTED_SECRET} "${REDACTED_SECRET}" Authorization: Bearer ${REDACTED_SECRET} short`,
    );
    expect(redactSecrets('nothing here', [KEY])).to.equal('nothing here');
  });

  it('leaves nothing of a key reachable from an SDK error: messages, headers, bodies, causes, hidden, symbol and getter properties, prototypes, bytes, URLs', () => {
    const original = sdkError();
    expect(secretLeaks(original, KEY), 'the fixture leaks').to.have.length.greaterThan(10);
    const scrubbed = scrubSecrets(original, [KEY]);
    expect(secretLeaks(scrubbed, KEY)).to.deep.equal([]);
    // What is not secret is kept, and the shape too.
    expect(scrubbed).to.be.instanceOf(Error).and.to.have.property('constructor', original.constructor);
    expect(scrubbed.message).to.equal(`401 Incorrect API key provided: ${REDACTED_SECRET}`);
    expect(scrubbed.stack).to.include(`Error: 401 Incorrect API key provided: ${REDACTED_SECRET}\n    at sdkError`);
    const fields = scrubbed as unknown as Record<string, unknown>;
    expect(fields['status']).to.equal(401);
    expect(fields['self']).to.equal(scrubbed);
    expect(Object.fromEntries(fields['headers'] as Headers)).to.deep.equal({ 'x-echo-authorization': `Bearer ${REDACTED_SECRET}`, 'api-key': REDACTED_SECRET, 'x-request-id': 'req-1' });
    expect(Buffer.isBuffer(fields['body'])).to.equal(true);
    expect(String(fields['body'])).to.equal(`{"key":"${REDACTED_SECRET}"}`);
    expect(fields['url']).to.equal(`https://api.test/v1/models?key=${REDACTED_SECRET}`);
    expect(Object.getOwnPropertyDescriptor(scrubbed, 'hidden')!.enumerable).to.equal(false);
    expect(((scrubbed.cause as Error).cause as { code: string }).code).to.equal('ECONNRESET');
    expect((scrubbed.cause as Error).name).to.equal('TypeError');
    const inner = (fields['others'] as AggregateError).errors[0] as Error;
    expect(Object.getPrototypeOf(inner)).to.equal(Error.prototype, 'a prototype holding data is not kept');
    expect(inspect(scrubbed)).to.match(/^<ref \*1> AuthenticationError: 401 Incorrect API key provided: \[REDACTED\]\n {4}at sdkError/);
    // The original is not changed.
    expect(original.message).to.include(KEY);
    expect((original as unknown as { headers: Headers }).headers.get('api-key')).to.equal(KEY);
  });

  it('returns the value itself when no secret is reachable, and keeps error markers on a copy', () => {
    const clean = new APIStatusError(500, 'boom', { requestId: 'req-2', cause: { headers: new Headers({ a: 'b' }) } });
    expect(scrubSecrets(clean, [KEY])).to.equal(clean);
    expect(scrubSecrets('text', [KEY])).to.equal('text');
    expect(scrubSecrets(clean, [])).to.equal(clean);
    const leaky = new APIStatusError(401, 'unauthorized', { cause: new Error(`key ${KEY}`) });
    const copy = scrubSecrets(leaky, [KEY]);
    expect(copy).not.to.equal(leaky);
    expect(APIStatusError.isInstance(copy) && ChatProviderError.isInstance(copy)).to.equal(true);
    expect(copy).to.include({ statusCode: 401, message: 'unauthorized' });
    expect(secretLeaks(copy, KEY)).to.deep.equal([]);
  });

  it('bounds the walk: past the depth or size limit the rest is cut, never kept unchecked', () => {
    let deep: Record<string, unknown> = { key: KEY };
    for (let i = 0; i < 100; i++) deep = { deep };
    const error = Object.assign(new Error('deep'), { deep, wide: Array.from({ length: 20_000 }, (_, i) => ({ i, key: i === 19_999 ? KEY : 'x' })) });
    const scrubbed = scrubSecrets(error, [KEY]);
    expect(secretLeaks(scrubbed, KEY)).to.deep.equal([]);
    expect(inspect(scrubbed, { depth: Infinity, maxArrayLength: Infinity })).to.include('[Truncated]');
  });
});
