import { expect } from 'chai';
import { inspect } from 'node:util';

import {
  APIConnectionError,
  APIStatusError,
  APITimeoutError,
  ChatProviderError,
  errorClassNames,
  headersOf,
  httpStatusError,
  sdkErrorConverter,
  type SdkErrorConverter,
} from './index.js';

const KEY = 'sk-acme-0123456789abcdef';

/** The errors of an SDK of the test's own, shaped like the `openai` and Anthropic SDKs' ones. */
class AcmeError extends Error {}
class AcmeStatusError extends AcmeError {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Headers,
  ) {
    super(message);
  }
}
class AcmeConnectionError extends AcmeError {}
class AcmeTimeoutError extends AcmeConnectionError {}

/** Acme's mapping: a status error, its timeout class (checked before the connection class it extends), its connection class. */
const convert: SdkErrorConverter = sdkErrorConverter({
  fallbackPrefix: 'Acme error',
  sdkError: (error, { message, cause, classes, redact, withCauses }) => {
    if (!classes.has('AcmeError')) return undefined;
    if (error instanceof AcmeStatusError) {
      return httpStatusError(error.status, `Acme API error ${error.status}: ${message}`, {
        headers: error.headers,
        requestId: error.headers.get('x-request-id') ?? undefined,
        cause,
        redact,
      });
    }
    if (classes.has('AcmeTimeoutError')) return new APITimeoutError(message, { cause });
    if (classes.has('AcmeConnectionError')) return new APIConnectionError(withCauses(message, (error as Error).cause), { cause });
    return undefined;
  },
});

/** Every text reachable from an error, as `util.inspect` and `JSON.stringify` show it. */
function shown(error: unknown): string {
  return `${inspect(error, { depth: Infinity, showHidden: true })}\n${JSON.stringify(error) ?? ''}`;
}

describe('provider kit: sdkErrorConverter', () => {
  it("an SDK status error: an APIStatusError with the status, the request id, retry-after, the SDK error as cause; the key nowhere", () => {
    const headers = new Headers({ 'x-request-id': 'req-1', 'retry-after': '7', 'x-echo': `Bearer ${KEY}` });
    const error = convert(new AcmeStatusError(429, `slow down, ${KEY}`, headers), [KEY]);
    expect(APIStatusError.isInstance(error)).to.equal(true);
    expect(error).to.include({ statusCode: 429, requestId: 'req-1', retryAfterSeconds: 7, message: 'Acme API error 429: slow down, [REDACTED]' });
    expect(error.cause).to.be.instanceOf(AcmeStatusError, 'a redacted copy keeps its class');
    expect((error.cause as AcmeStatusError).headers.get('x-echo')).to.equal('Bearer [REDACTED]');
    expect(shown(error)).to.not.contain(KEY);
  });

  it('a status error of a redirect that was not followed says where it led and why', () => {
    const error = convert(new AcmeStatusError(302, 'Found', new Headers({ location: 'https://elsewhere.example/v1' })), [KEY]) as APIStatusError;
    expect(error.statusCode).to.equal(302);
    expect(error.message).to.match(/a redirect to "https:\/\/elsewhere.example\/v1", which is not followed/);
  });

  it("the SDK's timeout and connection classes; the connection error names its causes", () => {
    const timeout = convert(new AcmeTimeoutError('Request timed out.'), []);
    expect(APITimeoutError.isInstance(timeout)).to.equal(true);
    expect(timeout.message).to.equal('Request timed out.');
    const refused = new AcmeConnectionError('Connection error.', { cause: new TypeError('fetch failed', { cause: Object.assign(new Error(`connect ECONNREFUSED (key ${KEY})`), { code: 'ECONNREFUSED' }) }) });
    const connection = convert(refused, [KEY]);
    expect(APIConnectionError.isInstance(connection)).to.equal(true);
    expect(connection.message).to.equal('Connection error. (fetch failed: connect ECONNREFUSED (key [REDACTED]))');
    expect(shown(connection)).to.not.contain(KEY);
  });

  it('an SDK error the mapping does not take goes on to the shared checks, then the fallback with its prefix', () => {
    expect(convert(new AcmeError('odd'), []).message).to.equal('Acme error: odd');
    expect(convert('a string', []).message).to.equal('Acme error: a string');
    expect(convert({ weird: true }, []).message).to.equal('Acme error: {"weird":true}');
    expect(sdkErrorConverter()(new Error('x'), []).message).to.equal('Error: x', 'the default prefix');
  });

  it('malformed stream data (a SyntaxError of JSON.parse)', () => {
    const error = convert(new SyntaxError('Unexpected token'), []);
    expect(error.constructor).to.equal(ChatProviderError);
    expect(error.message).to.equal('The server sent malformed stream data (an event that is not JSON): Unexpected token');
  });

  it('transport failures by their codes: a timeout, a broken connection, fetch cut mid-body', () => {
    const timedOut = convert(new TypeError('fetch failed', { cause: Object.assign(new Error('Headers Timeout Error'), { code: 'UND_ERR_HEADERS_TIMEOUT' }) }), []);
    expect(APITimeoutError.isInstance(timedOut)).to.equal(true);
    expect(timedOut.message).to.equal('The response timed out (fetch failed: Headers Timeout Error)');
    const reset = convert(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }), []);
    expect(APIConnectionError.isInstance(reset)).to.equal(true);
    expect(reset.message).to.equal('The connection broke before the response was complete (read ECONNRESET)');
    const cut = convert(new TypeError('terminated'), []);
    expect(APIConnectionError.isInstance(cut)).to.equal(true);
    expect(cut.cause).to.be.instanceOf(TypeError);
  });

  it('a ChatProviderError is kept as it is, or as a redacted copy of the same class when it holds a secret', () => {
    const clean = new APIStatusError(500, 'server error', { requestId: 'r' });
    expect(convert(clean, [KEY])).to.equal(clean);
    const leaky = new APIStatusError(401, `key ${KEY} refused`, { requestId: 'r' });
    const copy = convert(leaky, [KEY]);
    expect(copy).to.not.equal(leaky);
    expect(APIStatusError.isInstance(copy)).to.equal(true);
    expect(copy).to.include({ statusCode: 401, requestId: 'r', message: 'key [REDACTED] refused' });
  });

  it('patterns redact credentials recognised by their form, in messages and causes', () => {
    const google = sdkErrorConverter({ patterns: [/\bAIza[0-9A-Za-z_-]{35}\b/] });
    const key = `AIza${'x'.repeat(35)}`;
    const error = google(new Error(`bad key ${key}`), []);
    expect(error.message).to.equal('Error: bad key [REDACTED]');
    expect(shown(error)).to.not.contain(key);
    expect(google(new ChatProviderError(`quoted ${key}`), []).message).to.equal('quoted [REDACTED]');
  });
});

describe('provider kit: httpStatusError, errorClassNames, headersOf', () => {
  it('httpStatusError: retry-after-ms, else retry-after, else the given wait; ids redacted', () => {
    expect(httpStatusError(503, 'm', { headers: new Headers({ 'retry-after-ms': '1500' }) }).retryAfterSeconds).to.equal(1.5);
    expect(httpStatusError(503, 'm', { headers: new Headers(), retryAfterSeconds: 30 }).retryAfterSeconds).to.equal(30);
    const error = httpStatusError(400, 'm', { requestId: `id ${KEY}`, traceId: 't', redact: (text) => text.replace(KEY, '[REDACTED]') });
    expect(error).to.include({ requestId: 'id [REDACTED]', traceId: 't', message: 'm' });
    expect(error).to.not.have.property('cause');
  });

  it('errorClassNames: the prototype chain below Error, none for a non-error', () => {
    expect([...errorClassNames(new AcmeTimeoutError('t'))]).to.deep.equal(['AcmeTimeoutError', 'AcmeConnectionError', 'AcmeError']);
    expect([...errorClassNames(new Error('plain'))]).to.deep.equal([]);
    expect(errorClassNames({ name: 'AcmeError' }).size).to.equal(0);
  });

  it('headersOf: anything with a get, else undefined', () => {
    const headers = new Headers({ a: '1' });
    expect(headersOf(headers)).to.equal(headers);
    expect(headersOf({ a: '1' })).to.equal(undefined);
    expect(headersOf(undefined)).to.equal(undefined);
  });
});
