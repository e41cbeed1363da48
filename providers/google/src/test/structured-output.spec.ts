import { APIStatusError, StructuredOutputError, generate, structuredOutput, type JsonSchema } from '@kosong/core';
import { Type } from '@google/genai';
import { expect } from 'chai';

import { errorBody, textReply, wireChunk, wireText, wireThought } from '../testing/index.js';
import { rejection, user, useServer } from './support.js';

type Body = { generationConfig?: Record<string, unknown> };

const WEATHER: JsonSchema = {
  type: 'object',
  properties: { city: { type: 'string' }, celsius: { type: 'number' } },
  required: ['city', 'celsius'],
};

describe('GeminiChatProvider: structured output (responseJsonSchema) over HTTP', () => {
  const ctx = useServer();

  it('sends responseMimeType application/json and the schema as responseJsonSchema; parses the answer (thoughts left out)', async () => {
    ctx.server.reply({
      type: 'stream',
      events: [wireChunk({ parts: [wireThought('JSON it is.')] }), wireChunk({ parts: [wireText('{"city": "Turin",')] }), wireChunk({ parts: [wireText(' "celsius": 11}')], finishReason: 'STOP' })],
    });
    const result = await generate({ provider: ctx.provider(), systemPrompt: '', history: [user('weather?')], output: structuredOutput(WEATHER, { name: 'weather' }) });
    expect(result.output).to.deep.equal({ city: 'Turin', celsius: 11 });
    const config = (ctx.server.lastRequest.body as Body).generationConfig!;
    expect(config['responseMimeType']).to.equal('application/json');
    expect(config['responseJsonSchema']).to.deep.equal(WEATHER);
    expect(config).to.not.have.property('responseSchema');
  });

  it("replaces the provider's own responseSchema (the two cannot go together), and keeps its other config", async () => {
    ctx.server.reply(textReply(['{"city": "Pisa", "celsius": 20}']));
    const provider = ctx.provider({ config: { responseSchema: { type: Type.OBJECT }, temperature: 0.1 } });
    await generate({ provider, systemPrompt: '', history: [user('x')], output: WEATHER });
    const config = (ctx.server.lastRequest.body as Body).generationConfig!;
    expect(config).to.not.have.property('responseSchema');
    expect(config['temperature']).to.equal(0.1);
  });

  it('an array root is asked for as {"value": …} and unwrapped', async () => {
    ctx.server.reply(textReply(['{"value": [1, 2, 3]}']));
    const result = await generate({ provider: ctx.provider(), systemPrompt: '', history: [user('x')], output: { type: 'array', items: { type: 'integer' } } });
    expect(result.output).to.deep.equal([1, 2, 3]);
    const schema = (ctx.server.lastRequest.body as Body).generationConfig!['responseJsonSchema'] as { properties: object };
    expect(schema.properties).to.deep.equal({ value: { type: 'array', items: { type: 'integer' } } });
  });

  it('cut off (finish reason MAX_TOKENS): truncated; a schema the API refuses: its 400 as an APIStatusError', async () => {
    ctx.server.reply({ type: 'stream', events: [wireChunk({ parts: [wireText('{"city": "Ve')], finishReason: 'MAX_TOKENS' })] });
    const truncated = (await rejection(generate({ provider: ctx.provider(), systemPrompt: '', history: [user('x')], output: WEATHER }))) as StructuredOutputError;
    expect(StructuredOutputError.isInstance(truncated), String(truncated)).to.equal(true);
    expect(truncated.failure).to.equal('truncated');

    ctx.server.reply({ type: 'body', status: 400, body: errorBody(400, 'INVALID_ARGUMENT', 'responseJsonSchema: unsupported keyword') });
    const refused = await rejection(generate({ provider: ctx.provider(), systemPrompt: '', history: [user('x')], output: WEATHER }));
    expect(APIStatusError.isInstance(refused), String(refused)).to.equal(true);
    expect(refused).to.include({ statusCode: 400 });
  });
});
