import { StructuredOutputError, generate, step, emptyToolset, structuredOutput, type JsonSchema } from '@kosong/core';
import { expect } from 'chai';

import { KimiChatProvider, OpenAIChatProvider } from '../index.js';
import { completionChunk, responsesReply, textReply } from '../testing/index.js';
import { lastBody, useResponsesServer } from './responses-support.js';
import { TEST_KEY, rejection, user, useServer } from './support.js';

type Body = Record<string, unknown>;

/** A schema that fits strict Structured Outputs once closed: every property required. */
const STRICT_ABLE: JsonSchema = {
  type: 'object',
  properties: { city: { type: 'string' }, celsius: { type: 'number' }, note: { type: ['string', 'null'] } },
  required: ['city', 'celsius'],
};
/** One that does not: `note` is optional and cannot be null. */
const NOT_STRICT: JsonSchema = {
  type: 'object',
  properties: { city: { type: 'string' }, note: { type: 'string' } },
  required: ['city'],
};

describe('structured output on the OpenAI family (Chat Completions, Kimi, Responses) over HTTP', () => {
  describe('Chat Completions', () => {
    const ctx = useServer();
    const provider = (): OpenAIChatProvider => new OpenAIChatProvider({ baseURL: ctx.server.baseURL, apiKey: TEST_KEY, model: 'gpt-4.1' });

    it('sends response_format json_schema, strict, the schema made strict by the SDK; parses the answer', async () => {
      ctx.server.reply(textReply(['{"city": "Par', 'is", "celsius": 21, "note": null}']));
      const result = await generate({ provider: provider(), systemPrompt: '', history: [user('weather?')], output: structuredOutput(STRICT_ABLE, { name: 'weather', description: 'Weather.' }) });
      expect(result.output).to.deep.equal({ city: 'Paris', celsius: 21, note: null });
      const body = ctx.server.lastRequest.body as Body;
      expect(body['response_format']).to.deep.equal({
        type: 'json_schema',
        json_schema: {
          name: 'weather',
          description: 'Weather.',
          schema: { ...STRICT_ABLE, required: ['city', 'celsius', 'note'], additionalProperties: false },
          strict: true,
        },
      });
    });

    it('a schema strict mode cannot take goes as it is with strict: false (kosong validates the answer)', async () => {
      ctx.server.reply(textReply(['{"city": "Oslo"}']));
      const result = await generate({ provider: provider(), systemPrompt: '', history: [user('weather?')], output: NOT_STRICT });
      expect(result.output).to.deep.equal({ city: 'Oslo' });
      const format = (ctx.server.lastRequest.body as Body)['response_format'] as { json_schema: Record<string, unknown> };
      expect(format.json_schema).to.deep.equal({ name: 'output', schema: NOT_STRICT, strict: false });
    });

    it('an answer against the schema (the API did not hold the model to it) is a StructuredOutputError', async () => {
      ctx.server.reply(textReply(['{"city": 42}']));
      const error = await rejection(step({ provider: provider(), systemPrompt: '', toolset: emptyToolset, history: [user('x')], output: NOT_STRICT }));
      expect(StructuredOutputError.isInstance(error), String(error)).to.equal(true);
      expect((error as StructuredOutputError).issues[0]!.path).to.deep.equal(['city']);
    });

    it('cut off by max tokens (finish_reason length): truncated, with the text so far', async () => {
      ctx.server.reply({
        type: 'stream',
        chunks: [completionChunk({ delta: { role: 'assistant', content: '{"city": "Lo' } }), completionChunk({ delta: {}, finishReason: 'length' })],
      });
      const error = (await rejection(generate({ provider: provider(), systemPrompt: '', history: [user('x')], output: STRICT_ABLE, generation: { maxOutputTokens: 5 } }))) as StructuredOutputError;
      expect(error.failure).to.equal('truncated');
      expect(error.text).to.equal('{"city": "Lo');
    });

    it('sends no response_format without output, and extraBody still wins over it', async () => {
      ctx.server.reply(textReply(['hi']));
      await generate({ provider: provider(), systemPrompt: '', history: [user('x')] });
      expect(ctx.server.lastRequest.body).to.not.have.property('response_format');
      ctx.server.reply(textReply(['{"city": "a", "celsius": 1, "note": null}']));
      const custom = provider().withGenerationOptions({ extraBody: { response_format: { type: 'json_object' } } });
      await generate({ provider: custom, systemPrompt: '', history: [user('x')], output: STRICT_ABLE });
      expect((ctx.server.lastRequest.body as Body)['response_format']).to.deep.equal({ type: 'json_object' });
    });
  });

  describe('Kimi', () => {
    const ctx = useServer();

    it('sends the same response_format and parses the answer (reasoning left out)', async () => {
      ctx.server.reply({
        type: 'stream',
        chunks: [
          completionChunk({ delta: { role: 'assistant', reasoning_content: 'The user wants JSON.' } }),
          completionChunk({ delta: { content: '{"city": "Kyoto", "celsius": 9, "note": "rain"}' } }),
          completionChunk({ delta: {}, finishReason: 'stop' }),
        ],
      });
      const kimi = new KimiChatProvider({ baseURL: ctx.server.baseURL, apiKey: TEST_KEY, model: 'kimi-k2' });
      const result = await generate({ provider: kimi, systemPrompt: '', history: [user('x')], output: STRICT_ABLE });
      expect(result.output).to.deep.equal({ city: 'Kyoto', celsius: 9, note: 'rain' });
      const format = (ctx.server.lastRequest.body as Body)['response_format'] as { type: string; json_schema: { strict: boolean; name: string } };
      expect(format.type).to.equal('json_schema');
      expect(format.json_schema).to.include({ strict: true, name: 'output' });
    });
  });

  describe('Responses', () => {
    const ctx = useResponsesServer();

    it('sends text.format json_schema (strict when it can be) and parses the answer', async () => {
      ctx.server.reply(responsesReply([{ type: 'message', text: ['{"city": "Lima", ', '"celsius": 19, "note": null}'] }]));
      const result = await generate({ provider: ctx.provider(), systemPrompt: '', history: [user('x')], output: structuredOutput(STRICT_ABLE, { name: 'weather' }) });
      expect(result.output).to.deep.equal({ city: 'Lima', celsius: 19, note: null });
      expect(lastBody(ctx.server)['text']).to.deep.equal({
        format: { type: 'json_schema', name: 'weather', schema: { ...STRICT_ABLE, required: ['city', 'celsius', 'note'], additionalProperties: false }, strict: true },
      });
    });

    it('a schema strict mode cannot take: strict false; an incomplete response (max_output_tokens) is truncated', async () => {
      ctx.server.reply(responsesReply([{ type: 'message', text: ['{"city": "Li'] }], { status: 'incomplete', incompleteReason: 'max_output_tokens' }));
      const error = (await rejection(generate({ provider: ctx.provider(), systemPrompt: '', history: [user('x')], output: NOT_STRICT }))) as StructuredOutputError;
      expect((lastBody(ctx.server)['text'] as { format: { strict: boolean } }).format.strict).to.equal(false);
      expect(StructuredOutputError.isInstance(error), String(error)).to.equal(true);
      expect(error.failure).to.equal('truncated');
    });
  });
});
