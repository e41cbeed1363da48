/**
 * Errors: what the AI SDK throws (`APICallError` and friends, by their markers) as the kosong
 * `ChatProviderError` family, thrown by `doStream` or carried by an `error` part; and no key
 * reachable from any of them, whether the bridge was given it, found it in the model's headers, in
 * the environment, or only by its form.
 */
import { APICallError, EmptyResponseBodyError, JSONParseError, LoadAPIKeyError } from '@ai-sdk/provider';
import { APIConnectionError, APIStatusError, APITimeoutError, ChatProviderError, isRetryableError } from '@kosong/core';
import { expect } from 'chai';
import { inspect } from 'node:util';

import { aiSdkProvider, type AiSdkProviderOptions } from '../ai-sdk-provider.js';
import { environmentSecrets } from '../convert-error.js';
import { drain, GO, modelV4, modelWith, rejection, textBlock } from './support.js';

const KEY = 'mistral0123456789abcdefKEY';

/** The error of a call whose `doStream` throws `error`. */
async function thrown(error: unknown, options: AiSdkProviderOptions = {}, model = modelWith(() => Promise.reject(error))): Promise<unknown> {
  return rejection(aiSdkProvider(model, options).generate('', [], GO));
}

function apiCallError(fields: Partial<ConstructorParameters<typeof APICallError>[0]>): APICallError {
  return new APICallError({ message: 'failed', url: 'https://api.example.com/v1/chat', requestBodyValues: { model: 'm' }, ...fields });
}

/** Every form in which `secret` shows in `value`, as a logged error prints it. */
function leaks(value: unknown, secret: string): boolean {
  return inspect(value, { depth: Infinity, showHidden: true }).includes(secret) || String(value).includes(secret) || (JSON.stringify(value) ?? '').includes(secret);
}

describe('aiSdkProvider: errors', () => {
  it('APICallError with a status → APIStatusError with the status, request id and retry-after', async () => {
    const caught = await thrown(apiCallError({ message: 'Rate limit reached', statusCode: 429, responseHeaders: { 'retry-after': '7', 'x-request-id': 'req_1' }, responseBody: '{"error":{}}' }));
    expect(APIStatusError.isInstance(caught), String(caught)).to.equal(true);
    expect(caught).to.include({ statusCode: 429, retryAfterSeconds: 7, requestId: 'req_1', message: 'Rate limit reached' });
    expect(isRetryableError(caught)).to.equal(true);
    const bad = await thrown(apiCallError({ statusCode: 400, responseHeaders: { 'request-id': 'req_ant' } }));
    expect(bad).to.include({ statusCode: 400, requestId: 'req_ant' });
    expect(isRetryableError(bad)).to.equal(false);
  });

  it('APICallError without a status: a timeout down its causes → APITimeoutError; a retryable one → APIConnectionError; else a ChatProviderError', async () => {
    const timeout = await thrown(apiCallError({ message: 'Cannot connect to API: timed out', isRetryable: true, cause: Object.assign(new Error('connect timeout'), { code: 'UND_ERR_CONNECT_TIMEOUT' }) }));
    expect(APITimeoutError.isInstance(timeout), String(timeout)).to.equal(true);
    const refused = await thrown(apiCallError({ message: 'Cannot connect to API: connect ECONNREFUSED 127.0.0.1:1', isRetryable: true, cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) }));
    expect(APIConnectionError.isInstance(refused), String(refused)).to.equal(true);
    expect((refused as Error).message).to.contain('ECONNREFUSED');
    const other = await thrown(apiCallError({ message: 'odd', isRetryable: false }));
    expect(other).to.be.instanceOf(ChatProviderError).and.include({ message: 'AI SDK error: odd' });
    expect(APIConnectionError.isInstance(other)).to.equal(false);
  });

  it('LoadAPIKeyError → "no API key. Set the <VARIABLE> environment variable" (what the CLI explains)', async () => {
    const caught = await thrown(new LoadAPIKeyError({ message: "Mistral API key is missing. Pass it using the 'apiKey' parameter or the MISTRAL_API_KEY environment variable." }), { name: 'mistral' });
    expect((caught as Error).message).to.equal('mistral: no API key. Set the MISTRAL_API_KEY environment variable, or pass the `apiKey` option');
  });

  it('malformed stream data, an empty body, and errors of no SDK class', async () => {
    const malformed = await drain(await aiSdkProvider(modelV4([{ type: 'error', error: new JSONParseError({ text: '{bad', cause: new SyntaxError('Unexpected token') }) }])).generate('', [], GO));
    expect((malformed.error as Error).message).to.match(/^The model's stream sent malformed data: /);
    expect(APIConnectionError.isInstance(await thrown(new EmptyResponseBodyError()))).to.equal(true);
    expect(await thrown(new Error('boom'))).to.include({ message: 'AI SDK error: boom' });
    const socket = await thrown(Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('reset'), { code: 'ECONNRESET' }) }));
    expect(APIConnectionError.isInstance(socket)).to.equal(true);
  });

  it('an APICallError of another copy of the SDK (its marker only) maps the same', async () => {
    const foreign = Object.assign(new Error('Service Unavailable'), { [Symbol.for('vercel.ai.error')]: true, [Symbol.for('vercel.ai.error.AI_APICallError')]: true, statusCode: 503, responseHeaders: {} });
    expect(await thrown(foreign)).to.include({ statusCode: 503 });
  });

  it('a redirect the model did not follow (sameOriginRedirects) says where it led', async () => {
    const caught = await thrown(apiCallError({ message: 'Moved', statusCode: 307, responseHeaders: { location: 'http://127.0.0.2:9/v1/chat' } }));
    expect((caught as Error).message).to.match(/redirect/i).and.contain('http://127.0.0.2:9');
    expect(isRetryableError(caught)).to.equal(false);
  });

  describe('no key reachable from an error: request and response bodies and headers are scrubbed', () => {
    const echoing = (key: string): APICallError =>
      apiCallError({
        message: `Invalid key ${key}`,
        statusCode: 401,
        requestBodyValues: { model: 'm', api_key: key },
        responseHeaders: { 'x-echo-authorization': `Bearer ${key}`, 'x-echo-key': key },
        responseBody: JSON.stringify({ error: { message: `bad key ${key}` } }),
      });

    it('a key given as a secret', async () => {
      const caught = await thrown(echoing(KEY), { secrets: [KEY] });
      expect(APIStatusError.isInstance(caught)).to.equal(true);
      expect(leaks(caught, KEY)).to.equal(false);
      expect((caught as Error).message).to.equal('Invalid key [REDACTED]');
    });

    it("the key the model sends, found in its package's headers (config.headers), whatever its form", async () => {
      const model = Object.assign(modelWith(() => Promise.reject(echoing(KEY))), { config: { headers: () => ({ authorization: `Bearer ${KEY}`, 'user-agent': 'ai-sdk/mistral' }) } });
      const caught = await thrown(undefined, {}, model);
      expect(leaks(caught, KEY)).to.equal(false);
      // an error in the stream too
      const streaming = Object.assign(modelV4([...textBlock('t', 'a'), { type: 'error', error: echoing(KEY) }]), { config: { headers: async () => ({ 'x-api-key': KEY }) } });
      const { error } = await drain(await aiSdkProvider(streaming).generate('', [], GO));
      expect(APIStatusError.isInstance(error)).to.equal(true);
      expect(leaks(error, KEY)).to.equal(false);
    });

    it("the values of the environment's credential variables", async () => {
      const caught = await thrown(echoing(KEY), { env: { MISTRAL_API_KEY: KEY, HOME: '/home/someone' } });
      expect(leaks(caught, KEY)).to.equal(false);
      expect(environmentSecrets({ MISTRAL_API_KEY: KEY, AWS_SECRET_ACCESS_KEY: 'aws-secret-value', HF_TOKEN: 'hf_abcdefgh', PATH: '/usr/bin:/bin', SHORT_TOKEN: 'abc', NODE_ENV: 'production' })).to.deep.equal([
        KEY,
        'aws-secret-value',
        'hf_abcdefgh',
      ]);
    });

    it('keys of the known forms (sk-…, AIza…), with no secret given', async () => {
      for (const key of ['sk-proj-abcdefghijklmnopqrstuvwx', 'AIzaSyA1234567890abcdefghijklmnopqrstuv']) {
        const caught = await thrown(echoing(key), { env: {} });
        expect(leaks(caught, key), key).to.equal(false);
      }
    });

    it('toJSON and util.inspect show the model, never a key', () => {
      const provider = aiSdkProvider(modelV4([]), { headers: { authorization: `Bearer ${KEY}` }, secrets: [KEY] });
      expect(provider.toJSON()).to.deep.equal({ name: 'ai-sdk', modelName: 'mock-model', sdkProvider: 'mock.chat', specificationVersion: 'v4', thinkingEffort: undefined });
      expect(inspect(provider)).not.to.contain(KEY);
    });
  });
});
