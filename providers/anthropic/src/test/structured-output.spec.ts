import { StructuredOutputError, UnsupportedOutputError, generate, type JsonSchema } from '@kosong/core';
import { expect } from 'chai';

import { textReply } from '../testing/index.js';
import { providerFor, rejection, user, useServer } from './support.js';

type Body = Record<string, unknown>;

const WEATHER: JsonSchema = {
  type: 'object',
  properties: { city: { type: 'string', minLength: 2 }, celsius: { type: 'number', minimum: -90, maximum: 60 }, days: { type: 'array', items: { type: 'string' }, minItems: 3 } },
  required: ['city', 'celsius'],
};

describe('AnthropicChatProvider: structured output (output_config.format) over HTTP', () => {
  const ctx = useServer();

  it("sends output_config.format json_schema in the API's subset (objects closed, other constraints described); parses the answer", async () => {
    ctx.server.reply(textReply(['{"city": "Lyon", ', '"celsius": 17, "days": ["mon", "tue", "wed"]}']));
    const result = await generate({ provider: providerFor(ctx.server), systemPrompt: '', history: [user('weather?')], output: WEATHER });
    expect(result.output).to.deep.equal({ city: 'Lyon', celsius: 17, days: ['mon', 'tue', 'wed'] });
    const format = ((ctx.server.lastRequest.body as Body)['output_config'] as Body)['format'] as { type: string; schema: Body };
    expect(format.type).to.equal('json_schema');
    expect(format.schema['additionalProperties']).to.equal(false);
    const properties = format.schema['properties'] as Record<string, Body>;
    expect(properties['celsius']).to.not.have.property('minimum');
    expect(properties['celsius']!['description']).to.contain('minimum').and.contain('-90');
    expect(properties['days']).to.not.have.property('minItems');
  });

  it('the constraints the API did not enforce are still checked: an answer breaking them is a StructuredOutputError', async () => {
    ctx.server.reply(textReply(['{"city": "X", "celsius": 99}']));
    const error = (await rejection(generate({ provider: providerFor(ctx.server), systemPrompt: '', history: [user('x')], output: WEATHER }))) as StructuredOutputError;
    expect(StructuredOutputError.isInstance(error), String(error)).to.equal(true);
    expect(error.issues.map((issue) => issue.path[0])).to.have.members(['city', 'celsius']);
  });

  it('keeps the effort of adaptive thinking beside the format in output_config', async () => {
    ctx.server.reply(textReply(['{"city": "Bonn", "celsius": 5}']));
    const provider = providerFor(ctx.server, { model: 'claude-opus-4-6' }).withThinking('high');
    await generate({ provider, systemPrompt: '', history: [user('x')], output: WEATHER });
    const config = (ctx.server.lastRequest.body as Body)['output_config'] as Body;
    expect(config['effort']).to.equal('high');
    expect(config['format']).to.have.property('type', 'json_schema');
  });

  it('a schema the API cannot take is an UnsupportedOutputError before any request: a map, a recursive schema, a node without a type', async () => {
    const schemas: [string, JsonSchema][] = [
      ['a map', { type: 'object', additionalProperties: { type: 'number' } }],
      ['recursive', { type: 'object', properties: { child: { $ref: '#' } } }],
      ['no type', { type: 'object', properties: { anything: {} }, required: ['anything'] }],
    ];
    for (const [label, schema] of schemas) {
      const before = ctx.server.requests.length;
      const error = await rejection(generate({ provider: providerFor(ctx.server), systemPrompt: '', history: [user('x')], output: schema }));
      expect(UnsupportedOutputError.isInstance(error), `${label}: ${String(error)}`).to.equal(true);
      expect(error).to.include({ provider: 'anthropic' });
      expect(ctx.server.requests.length, label).to.equal(before);
    }
  });

  it('cut off at max_tokens: truncated', async () => {
    ctx.server.reply(textReply(['{"city": "Na'], { stopReason: 'max_tokens' }));
    const error = (await rejection(generate({ provider: providerFor(ctx.server), systemPrompt: '', history: [user('x')], output: WEATHER }))) as StructuredOutputError;
    expect(error.failure).to.equal('truncated');
  });
});
