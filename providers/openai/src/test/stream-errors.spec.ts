import { Agent, APIStatusError, ChatProviderError, emptyToolset, isRetryableError, step, textPart, type AgentEvent } from '@kosong/core';
import { expect } from 'chai';

import { OpenAIChatProvider, OpenAIStreamError } from '../index.js';
import { completionChunk, errorEvent, responseEvents, textReply } from '../testing/index.js';
import { drain, TEST_KEY, user, useServer } from './support.js';
import { useResponsesServer } from './responses-support.js';

describe('Errors sent inside a stream that began with HTTP 200', () => {
  describe('Chat Completions: an error chunk (gateways that send 401/429 as HTTP 200 plus an error)', () => {
    const ctx = useServer();
    const provider = (): OpenAIChatProvider => new OpenAIChatProvider({ baseURL: ctx.server.baseURL, apiKey: TEST_KEY, model: 'gpt-test' });

    /** The error of a stream that sends `error` after one text chunk, with a request id header. */
    async function failure(error: unknown): Promise<{ parts: unknown[]; error: unknown }> {
      ctx.server.reply({ type: 'stream', chunks: [completionChunk({ delta: { content: 'a' } }), { error }], done: false, headers: { 'x-request-id': 'req_200', 'x-trace-id': 'trace_200' } });
      return drain(await provider().generate('', [], [user('hi')]));
    }

    for (const [name, error, status] of [
      ['invalid_api_key (OpenAI)', { message: 'Incorrect API key provided.', type: 'invalid_request_error', param: null, code: 'invalid_api_key' }, 401],
      ['invalid_authentication_error (Moonshot)', { message: 'Invalid Authentication', type: 'invalid_authentication_error' }, 401],
      ['permission_denied', { message: 'Not allowed', code: 'permission_denied' }, 403],
      ['model_not_found', { message: 'The model does not exist', type: 'invalid_request_error', code: 'model_not_found' }, 404],
      ['rate_limit_exceeded', { message: 'Rate limit reached for gpt-test', type: 'requests', param: null, code: 'rate_limit_exceeded' }, 429],
      ['a numeric code (OpenRouter)', { code: 429, message: 'Rate limit exceeded: free-models-per-min' }, 429],
      ['a numeric status', { status: 502, message: 'Upstream error' }, 502],
      ['server_error', { message: 'The server had an error', type: 'server_error' }, 500],
      ['invalid_request_error', { message: 'Bad input', type: 'invalid_request_error', code: null }, 400],
    ] as const) {
      it(`${name} → APIStatusError ${status} with the request id, the message once, no "Error:" prefix`, async () => {
        const { parts, error: caught } = await failure(error);
        expect(parts).to.deep.equal([textPart('a')]);
        expect(APIStatusError.isInstance(caught), String(caught)).to.equal(true);
        expect(caught).to.include({ statusCode: status, requestId: 'req_200', traceId: 'trace_200' });
        expect(isRetryableError(caught)).to.equal([429, 500, 502].includes(status));
        const message = (caught as Error).message;
        expect(message).to.match(/^The Chat Completions stream sent an error \(/);
        expect(message).to.include(String(error.message));
        expect(message).to.not.match(/Error: Error:|: Error: /);
      });
    }

    it('the message of a key error: "… (invalid_api_key): Incorrect API key provided.", not "Error: Error: …"', async () => {
      const { error } = await failure({ message: 'Incorrect API key provided.', type: 'invalid_request_error', param: null, code: 'invalid_api_key' });
      expect((error as Error).message).to.equal('The Chat Completions stream sent an error (invalid_api_key): Incorrect API key provided.');
    });

    it('a code that stands for no status (insufficient_quota): an OpenAIStreamError naming it, not retried', async () => {
      const { error } = await failure({ message: 'You exceeded your current quota', type: 'insufficient_quota', code: 'insufficient_quota' });
      expect(error).to.be.instanceOf(OpenAIStreamError);
      expect(APIStatusError.isInstance(error)).to.equal(false);
      expect(error).to.include({ code: 'insufficient_quota', errorType: 'insufficient_quota', requestId: 'req_200' });
      expect(isRetryableError(error)).to.equal(false);
      expect((error as Error).message).to.equal('The Chat Completions stream sent an error (insufficient_quota): You exceeded your current quota');
    });

    it('an error without code or type, or a bare string: a ChatProviderError with its message', async () => {
      const { error } = await failure({ message: 'Something went wrong' });
      expect(ChatProviderError.isInstance(error) && !APIStatusError.isInstance(error), String(error)).to.equal(true);
      expect((error as Error).message).to.equal('The Chat Completions stream sent an error: Something went wrong');
      expect(((await failure('upstream exploded')).error as Error).message).to.equal('The Chat Completions stream sent an error: upstream exploded');
    });

    it('the key is never in the error, even when the gateway quotes it', async () => {
      const { error } = await failure({ message: `Incorrect API key provided: ${TEST_KEY}.`, code: 'invalid_api_key' });
      expect((error as Error).message).to.not.contain(TEST_KEY);
      expect((error as Error).message).to.contain('[REDACTED]');
    });

    it('the agent loop retries a 429 sent as HTTP 200 plus an error chunk, and the retry succeeds', async () => {
      ctx.server.reply({ type: 'stream', chunks: [{ error: { message: 'Rate limit reached', type: 'requests', code: 'rate_limit_exceeded' } }], done: false }, textReply(['fine']));
      const model = provider();
      const agent = new Agent({ systemPrompt: '', step: (options) => step({ provider: model, toolset: emptyToolset, ...options }), retry: { initialDelayMs: 1, jitterMs: 0 } });
      const events: AgentEvent[] = [];
      const turn = await agent.run('hi', { onEvent: (event) => void events.push(event) });
      expect(turn.message.content).to.deep.equal([textPart('fine')]);
      expect(ctx.server.requests).to.have.length(2);
      expect(events.filter((event) => event.type === 'retry')).to.have.length(1);
    });
  });

  describe('Responses: an `error` event', () => {
    const ctx = useResponsesServer();

    async function failure(event: object): Promise<unknown> {
      ctx.server.reply({ type: 'stream', chunks: [...responseEvents([{ type: 'message', text: ['Hel'] }]).slice(0, 5), event] });
      const { parts, error } = await drain(await ctx.provider().generate('', [], [user('hi')]));
      expect(parts).to.deep.equal([textPart('Hel')]);
      return error;
    }

    for (const form of ['nested', 'flat'] as const) {
      it(`${form}: rate_limit_exceeded → a retryable APIStatusError 429, server_error → 500, naming event and code`, async () => {
        const limited = await failure(errorEvent('rate_limit_exceeded', 'Slow down', form));
        expect(APIStatusError.isInstance(limited), String(limited)).to.equal(true);
        expect(limited).to.include({ statusCode: 429 });
        expect(isRetryableError(limited)).to.equal(true);
        expect((limited as Error).message).to.equal('The Responses stream sent error (rate_limit_exceeded): Slow down');
        const broken = await failure(errorEvent('server_error', 'The server had an error', form));
        expect(broken).to.include({ statusCode: 500 });
        expect(isRetryableError(broken)).to.equal(true);
      });

      it(`${form}: insufficient_quota → an OpenAIStreamError naming the event and the code, not retried`, async () => {
        const error = await failure(errorEvent('insufficient_quota', 'You exceeded your current quota', form));
        expect(error).to.be.instanceOf(OpenAIStreamError);
        expect(error).to.include({ code: 'insufficient_quota' });
        expect(isRetryableError(error)).to.equal(false);
        expect((error as Error).message).to.equal('The Responses stream sent error (insufficient_quota): You exceeded your current quota');
      });
    }

    it('the nested error as the API sends it, with type and param: a code of no status falls back on its type (invalid_request_error → 400)', async () => {
      const error = await failure({ type: 'error', sequence_number: 3, error: { type: 'invalid_request_error', code: 'invalid_prompt', message: 'Invalid prompt', param: 'input' } });
      expect(error).to.include({ statusCode: 400 });
      expect(isRetryableError(error)).to.equal(false);
      expect((error as Error).message).to.equal('The Responses stream sent error (invalid_prompt): Invalid prompt');
      const typed = await failure({ type: 'error', error: { type: 'image_error', code: 'invalid_image', message: 'Bad image' } });
      expect(typed).to.be.instanceOf(OpenAIStreamError);
      expect(typed).to.include({ code: 'invalid_image', errorType: 'image_error' });
    });

    it('a Chat-Completions-style `{"error": {...}}` without a type (a gateway): the same error, not skipped', async () => {
      const error = await failure({ error: { message: 'Rate limit reached', code: 'rate_limit_exceeded' } });
      expect(error).to.include({ statusCode: 429 });
    });
  });
});
