/**
 * The worked example of "Writing a provider" (docs/writing-a-provider.md), run against the local
 * Chat Completions server: a provider that is its wire mapping and nothing else gets the rest from
 * the kit (copies, resolved options, the stream's read loop and idle timer, errors, secrets).
 */
import { inspect } from 'node:util';

import { APIStatusError, APITimeoutError, generate, InvalidGenerationOptionError, step, toolOk, type Toolset } from '@kosong/core';
import { expect } from 'chai';

import { completionChunk, textReply, toolCallChunk, usageChunk } from '../testing/index.js';
import { CompatibleChatProvider } from './compatible-provider.js';
import { drain, rejection, TEST_KEY, useServer, user } from './support.js';

const lookup: Toolset = {
  tools: [{ name: 'lookup', description: 'Looks something up.', parameters: { type: 'object', properties: { q: { type: 'string' } } } }],
  handle: (call) => ({ toolCallId: call.id, returnValue: toolOk({ output: `found ${call.function.arguments ?? ''}` }) }),
};

describe('Writing a provider: the worked example (an OpenAI-compatible provider on the kit)', () => {
  const ctx = useServer();
  const provider = (timeoutMs?: number): CompatibleChatProvider =>
    new CompatibleChatProvider({ baseURL: ctx.server.baseURL, apiKey: TEST_KEY, model: 'm', ...(timeoutMs === undefined ? {} : { timeoutMs }) });

  it('streams text with usage, and sends the options core resolved in the API’s terms', async () => {
    ctx.server.reply(textReply(['Hello', ', world']));
    const configured = provider().withGeneration({ temperature: 0.2, maxOutputTokens: 50 }).withThinking('max');
    const result = await generate({ provider: configured, systemPrompt: 'Be brief.', history: [user('hi')], generation: { temperature: 0.7, stopSequences: ['END'] } });
    expect(result.message.content).to.deep.equal([{ type: 'text', text: 'Hello, world' }]);
    expect(result.usage).to.deep.include({ inputOther: 10, output: 2 });
    expect(result.finishReason).to.equal('stop');
    const body = ctx.server.lastRequest.body as Record<string, unknown>;
    expect(body).to.deep.include({ model: 'm', temperature: 0.7, max_completion_tokens: 50, stop: ['END'], reasoning_effort: 'xhigh' });
    expect(ctx.server.lastRequest.headers['authorization']).to.equal(`Bearer ${TEST_KEY}`);
  });

  it('streams tool calls that step() dispatches', async () => {
    ctx.server.reply({
      type: 'stream',
      chunks: [
        completionChunk({ delta: { content: 'Looking.' } }),
        toolCallChunk({ index: 0, id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"q":' } }),
        toolCallChunk({ index: 0, function: { arguments: '"alpha"}' } }),
        completionChunk({ delta: {}, finishReason: 'tool_calls' }),
        usageChunk({ prompt_tokens: 5, completion_tokens: 3 }),
      ],
    });
    const result = await step({ provider: provider(), systemPrompt: '', toolset: lookup, history: [user('find alpha')] });
    expect(result.toolCalls.map((call) => [call.id, call.function.name, call.function.arguments])).to.deep.equal([['call_1', 'lookup', '{"q":"alpha"}']]);
    expect((await result.toolResults()).map((r) => r.returnValue.output)).to.deep.equal(['found {"q":"alpha"}']);
    const body = ctx.server.lastRequest.body as { tools: unknown[] };
    expect(body.tools).to.have.length(1);
  });

  it('a bad option is refused before any request; one the API lacks too', async () => {
    expect(() => provider().withGeneration({ topP: 2 })).to.throw(InvalidGenerationOptionError);
    const error = await rejection(generate({ provider: provider(), systemPrompt: '', history: [user('hi')], generation: { stopSequences: ['a', 'b', 'c', 'd', 'e'] } }));
    expect((error as Error).message).to.match(/does not support the generation option "stopSequences": at most 4 sequences/);
    expect(ctx.server.requests).to.have.length(0);
  });

  it('a 429: an APIStatusError with retry-after and the request id, the key redacted from it', async () => {
    ctx.server.reply({ type: 'json', status: 429, body: { error: { message: `slow down ${TEST_KEY}` } }, headers: { 'retry-after': '3', 'x-request-id': 'req-7' } });
    const error = await rejection(generate({ provider: provider(), systemPrompt: '', history: [user('hi')] }));
    expect(APIStatusError.isInstance(error)).to.equal(true);
    expect(error).to.include({ statusCode: 429, retryAfterSeconds: 3, requestId: 'req-7' });
    expect(inspect(error, { depth: Infinity, showHidden: true })).to.not.contain(TEST_KEY);
  });

  it('a server that goes silent mid-stream: the idle timeout, and the request is closed', async () => {
    ctx.server.reply({ ...textReply(['Hello']), then: 'hang', done: false, chunks: [completionChunk({ delta: { content: 'Hello' } })] });
    const stream = await provider(100).generate('', [], [user('hi')]);
    const { parts, error } = await drain(stream);
    expect(parts).to.have.length(1);
    expect(APITimeoutError.isInstance(error), String(error)).to.equal(true);
    expect(await ctx.server.lastRequest.closed).to.equal('aborted');
  });

  it('never shows the API key when logged or serialised', () => {
    const shown = provider().withThinking('high');
    expect(JSON.parse(JSON.stringify(shown))).to.deep.equal({ name: 'compatible', modelName: 'm', baseURL: ctx.server.baseURL.replace(/\/+$/, ''), thinkingEffort: 'high' });
    expect(inspect(shown, { depth: 10 })).to.not.contain(TEST_KEY);
  });
});
