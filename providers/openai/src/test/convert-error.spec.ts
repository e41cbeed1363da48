import { inspect } from 'node:util';

import { APIConnectionError, APIStatusError, APITimeoutError, ChatProviderError } from '@kosong/core';
import { expect } from 'chai';
import * as sdk from 'openai';

import { convertError } from '../index.js';
import { TEST_KEY } from './support.js';

const convert = (error: unknown): ChatProviderError => convertError(error, { secrets: [TEST_KEY] });

describe('convertError (kosong spec §2.6, §7.1)', () => {
  describe('the bare SDK APIError without a body (a transport failure): the message heuristic', () => {
    const table: [string, new (...args: never[]) => ChatProviderError][] = [
      ['Network connection lost.', APIConnectionError],
      ['Connection error.', APIConnectionError],
      ['network error', APIConnectionError],
      ['disconnected from server', APIConnectionError],
      ['connection reset by peer', APIConnectionError],
      ['connection closed unexpectedly', APIConnectionError],
      ['Request timed out.', APITimeoutError],
      ['timed out', APITimeoutError],
      ['connection timed out', APITimeoutError],
      ['Something completely unrelated', ChatProviderError],
      ['Internal server error', ChatProviderError],
      ['Your session has been reset', ChatProviderError],
      ['Stream closed by server due to policy violation', ChatProviderError],
    ];
    for (const [message, expected] of table) {
      it(`"${message}" → ${expected.name}`, () => {
        const error = convert(new sdk.APIError(undefined, undefined, message, undefined));
        expect(error.constructor).to.equal(expected);
        expect(error.message).to.contain(message);
      });
    }
  });

  it('maps the SDK connection and timeout errors by class, timeout first', () => {
    const refused = new sdk.APIConnectionError({ message: 'Connection error.', cause: new TypeError('fetch failed', { cause: new Error('connect ECONNREFUSED 127.0.0.1:9') }) });
    const connection = convert(refused);
    expect(connection.constructor).to.equal(APIConnectionError);
    expect(connection.message).to.equal('Connection error. (fetch failed: connect ECONNREFUSED 127.0.0.1:9)');
    expect(connection.cause).to.equal(refused);
    expect(convert(new sdk.APIConnectionTimeoutError()).constructor).to.equal(APITimeoutError);
  });

  it('maps an APIError with a body (an error event in the stream) to a plain ChatProviderError, without the heuristic', () => {
    const error = convert(new sdk.APIError(undefined, { message: 'Connection limit exceeded' }, undefined, undefined));
    expect(error.constructor).to.equal(ChatProviderError);
    expect(error.message).to.equal('Error: Connection limit exceeded');
  });

  it('maps status errors with request id, trace id and retry-after', () => {
    const headers = new Headers({ 'x-request-id': 'req-1', 'x-trace-id': 'trace-1', 'retry-after': '7' });
    const error = convert(sdk.APIError.generate(429, { error: { message: 'Rate limited' } }, undefined, headers));
    expect(error).to.be.instanceOf(APIStatusError);
    expect(error).to.include({ statusCode: 429, requestId: 'req-1', traceId: 'trace-1', retryAfterSeconds: 7, message: '429 Rate limited' });
    const ms = convert(sdk.APIError.generate(503, undefined, 'busy', new Headers({ 'retry-after-ms': '1500', 'retry-after': '9' })));
    expect(ms).to.include({ statusCode: 503, retryAfterSeconds: 1.5, requestId: undefined, traceId: undefined });
    const date = new Date(Date.now() + 30_000).toUTCString();
    const byDate = convert(sdk.APIError.generate(429, undefined, 'x', new Headers({ 'retry-after': date }))) as APIStatusError;
    expect(byDate.retryAfterSeconds).to.be.within(28, 30);
    expect((convert(sdk.APIError.generate(500, undefined, 'x', new Headers({ 'retry-after': 'soon' }))) as APIStatusError).retryAfterSeconds).to.equal(undefined);
  });

  it('maps a stream cut by the network to APIConnectionError, and a fetch body timeout to APITimeoutError', () => {
    const socket = Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' });
    const cut = convert(new TypeError('terminated', { cause: socket }));
    expect(cut.constructor).to.equal(APIConnectionError);
    expect(cut.message).to.equal('The connection broke before the response was complete (terminated: other side closed)');
    const timeout = convert(new TypeError('terminated', { cause: Object.assign(new Error('Body Timeout Error'), { code: 'UND_ERR_BODY_TIMEOUT' }) }));
    expect(timeout.constructor).to.equal(APITimeoutError);
    expect(convert(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })).constructor).to.equal(APIConnectionError);
  });

  it('says so for malformed SSE data', () => {
    let syntax: unknown;
    try {
      JSON.parse('{not json');
    } catch (error) {
      syntax = error;
    }
    const error = convert(syntax);
    expect(error.constructor).to.equal(ChatProviderError);
    expect(error.message).to.match(/^The server sent malformed stream data \(an event that is not JSON\): /);
  });

  it('recognises the SDK classes by name, so a client from another copy of the openai package works', () => {
    class APIError extends Error {}
    class APIConnectionError_ extends APIError {}
    Object.defineProperty(APIConnectionError_, 'name', { value: 'APIConnectionError' });
    class APIConnectionTimeoutError extends APIConnectionError_ {}
    expect(convert(new APIConnectionTimeoutError('Request timed out.')).constructor).to.equal(APITimeoutError);
    expect(convert(new APIConnectionError_('Connection error.')).constructor).to.equal(APIConnectionError);
  });

  it('returns a ChatProviderError unchanged, and wraps anything else', () => {
    const original = new APITimeoutError('t');
    expect(convert(original)).to.equal(original);
    const other = convert(new RangeError('odd'));
    expect(other.constructor).to.equal(ChatProviderError);
    expect(other.message).to.equal('Error: odd');
  });

  it('redacts the API key and bearer tokens, and keeps as cause a copy of the SDK error with the key redacted everywhere', () => {
    const echo = new Headers({ 'x-request-id': 'req-9', 'x-echo-authorization': `Bearer ${TEST_KEY}`, 'api-key': TEST_KEY });
    const leaky = sdk.APIError.generate(401, { error: { message: `Incorrect API key provided: ${TEST_KEY}` } }, undefined, echo);
    const error = convert(leaky);
    expect(error).to.include({ message: '401 Incorrect API key provided: [REDACTED]', statusCode: 401, requestId: 'req-9' });
    expect(error.cause).to.be.instanceOf(sdk.AuthenticationError).and.not.equal(leaky);
    expect(Object.fromEntries((error.cause as sdk.APIError).headers!)).to.include({ 'x-echo-authorization': 'Bearer [REDACTED]', 'api-key': '[REDACTED]' });
    expect(inspect(error, { depth: Infinity, showHidden: true })).to.not.contain(TEST_KEY).and.not.contain(TEST_KEY.slice(1));
    const headersOnly = convert(sdk.APIError.generate(401, { error: { message: 'Incorrect API key' } }, undefined, echo));
    expect(inspect(headersOnly, { depth: Infinity, showHidden: true }), 'the key is only in the headers').to.not.contain(TEST_KEY.slice(1));
    const bearer = convert(new Error('proxy said: Authorization: Bearer abcdef123456 is invalid'));
    expect(bearer.message).to.equal('Error: proxy said: Authorization: Bearer [REDACTED] is invalid');
    const body = convert(sdk.APIError.generate(400, { error: { message: 'bad', echo: TEST_KEY } }, undefined, new Headers()));
    expect(JSON.stringify((body.cause as sdk.APIError).error), 'the key is only in the body').to.equal('{"message":"bad","echo":"[REDACTED]"}');
    const ours = new APIStatusError(401, `key ${TEST_KEY} refused`);
    expect(convert(ours)).to.include({ statusCode: 401, message: 'key [REDACTED] refused' });
  });
});
