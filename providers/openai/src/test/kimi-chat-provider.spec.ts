import { APIStatusError, generate, textPart, thinkPart, tokenUsage, toolCall, type ThinkingEffort } from '@kosong/core';
import { expect } from 'chai';

import { KimiChatProvider, type KimiChatProviderOptions } from '../index.js';
import { completionChunk, toolCallChunk, usageChunk } from '../testing/index.js';
import { collect, delay, rejection, TEST_KEY, user, useServer } from './support.js';

type Body = Record<string, unknown>;

describe('KimiChatProvider over HTTP (kosong spec §7.2)', () => {
  const ctx = useServer();
  const kimi = (options: Partial<KimiChatProviderOptions> = {}): KimiChatProvider =>
    new KimiChatProvider({ baseURL: ctx.server.baseURL, apiKey: TEST_KEY, model: 'kimi-k2-turbo-preview', ...options });

  async function body(provider: KimiChatProvider): Promise<Body> {
    await collect(await provider.generate('', [], [user('hi')]));
    return ctx.server.lastRequest.body as Body;
  }

  describe('responses', () => {
    it('streams reasoning_content as think parts, keeping an empty one, then the tool call', async () => {
      ctx.server.reply({
        type: 'stream',
        chunks: [
          completionChunk({ delta: { role: 'assistant', reasoning_content: '' } }),
          toolCallChunk({ index: 0, id: 'Shell_2', type: 'function', function: { name: 'Shell', arguments: '{}' } }),
          completionChunk({ finishReason: 'tool_calls' }),
        ],
      });
      expect(await collect(await kimi().generate('', [], [user('ls')]))).to.deep.equal([thinkPart(''), toolCall('Shell_2', 'Shell', '{}')]);
    });

    it('gives no think part when the delta has no reasoning field', async () => {
      ctx.server.reply({ type: 'stream', chunks: [completionChunk({ delta: { content: 'Done.' }, finishReason: 'stop' })] });
      expect(await collect(await kimi().generate('', [], [user('go')]))).to.deep.equal([textPart('Done.')]);
    });

    it('merges reasoning and text through generate(), and sends the reasoning back next turn', async () => {
      ctx.server.reply({
        type: 'stream',
        chunks: [
          completionChunk({ delta: { reasoning_content: 'Two and ' } }),
          completionChunk({ delta: { reasoning_content: 'two.' } }),
          completionChunk({ delta: { content: 'Four.' }, finishReason: 'stop' }),
        ],
      });
      const provider = kimi();
      const result = await generate({ provider, systemPrompt: '', history: [user('2+2?')] });
      expect(result.message.content).to.deep.equal([thinkPart('Two and two.'), textPart('Four.')]);
      await collect(await provider.generate('', [], [user('2+2?'), result.message, user('And 3+3?')]));
      expect((ctx.server.lastRequest.body as Body)['messages']).to.deep.equal([
        { role: 'user', content: '2+2?' },
        { role: 'assistant', content: 'Four.', reasoning_content: 'Two and two.' },
        { role: 'user', content: 'And 3+3?' },
      ]);
    });

    it('reads usage from the choice, where Moonshot puts it, with cached_tokens as cache reads', async () => {
      ctx.server.reply({
        type: 'stream',
        chunks: [
          completionChunk({ delta: { content: 'Hi' } }),
          completionChunk({ delta: {}, finishReason: 'stop', choiceUsage: { prompt_tokens: 8, completion_tokens: 11, total_tokens: 19, cached_tokens: 8 } }),
        ],
      });
      const stream = await kimi().generate('', [], [user('hi')]);
      await collect(stream);
      expect(stream.usage).to.deep.equal(tokenUsage({ inputOther: 0, output: 11, inputCacheRead: 8 }));
    });

    it('prefers the top-level cached_tokens over prompt_tokens_details', async () => {
      ctx.server.reply({
        type: 'stream',
        chunks: [
          completionChunk({ delta: { content: 'Hi' }, finishReason: 'stop' }),
          usageChunk({ prompt_tokens: 50, completion_tokens: 5, cached_tokens: 30, prompt_tokens_details: { cached_tokens: 10 } }),
        ],
      });
      const stream = await kimi().generate('', [], [user('hi')]);
      await collect(stream);
      expect(stream.usage).to.deep.equal(tokenUsage({ inputOther: 20, output: 5, inputCacheRead: 30 }));
    });

    it('has the x-trace-id header right after generate(), before the body is read', async () => {
      ctx.server.reply({ type: 'stream', chunks: [], done: false, then: 'hang', headers: { 'x-trace-id': 'trace-abc-123' } });
      const controller = new AbortController();
      const stream = await kimi().generate('', [], [user('hi')], { signal: controller.signal });
      expect(stream.traceId).to.equal('trace-abc-123');
      controller.abort();
      expect(await Promise.race([ctx.server.lastRequest.closed, delay(2_000).then(() => 'open')]), 'abort closes an unread stream').to.equal('aborted');
    });

    it('has no trace id without the header', async () => {
      const stream = await kimi().generate('', [], [user('hi')]);
      expect(stream.traceId).to.equal(undefined);
      await collect(stream);
    });

    it('carries the trace id on a status error', async () => {
      ctx.server.reply({ type: 'json', status: 500, body: { error: { message: 'boom' } }, headers: { 'x-trace-id': 'trace-abc-123', 'x-request-id': 'req-1' } });
      const error = (await rejection(kimi().generate('', [], [user('hi')]))) as APIStatusError;
      expect(error).to.be.instanceOf(APIStatusError);
      expect(error).to.include({ statusCode: 500, traceId: 'trace-abc-123', requestId: 'req-1' });
      expect(ctx.server.requests).to.have.length(1);
    });
  });

  describe('requests', () => {
    it('switches thinking with `thinking: {type}`, sends no reasoning_effort, and keeps the effort as given', async () => {
      const efforts: ThinkingEffort[] = ['off', 'low', 'medium', 'high', 'xhigh', 'max'];
      for (const effort of efforts) {
        const provider = kimi().withThinking(effort);
        const sent = await body(provider);
        expect(sent['thinking'], effort).to.deep.equal({ type: effort === 'off' ? 'disabled' : 'enabled' });
        expect(sent).to.not.have.property('reasoning_effort');
        expect(provider.thinkingEffort).to.equal(effort);
      }
      expect(kimi().thinkingEffort).to.equal(undefined);
      expect(await body(kimi())).to.not.have.property('thinking');
    });

    it('treats maxTokens as an alias of max_completion_tokens', async () => {
      const sent = await body(kimi({ generation: { temperature: 0.7, maxTokens: 2048 } }));
      expect(sent).to.include({ temperature: 0.7, max_completion_tokens: 2048 });
      expect(sent).to.not.have.property('max_tokens');
      const unset = kimi().withGenerationOptions({ maxTokens: 2048 }).withGenerationOptions({ maxTokens: null });
      expect(unset.generationOptions.maxCompletionTokens).to.equal(null);
      expect(await body(unset)).to.not.have.any.keys('max_tokens', 'max_completion_tokens');
      const canonical = kimi().withGenerationOptions({ maxTokens: 2048, maxCompletionTokens: null });
      expect(canonical.generationOptions.maxCompletionTokens).to.equal(null);
      const later = kimi({ generation: { maxCompletionTokens: 8000 } }).withGenerationOptions({ maxTokens: 1024 });
      expect((await body(later))['max_completion_tokens']).to.equal(1024);
    });

    it('merges extra body fields: `thinking` field by field, other keys last writer wins', async () => {
      expect((await body(kimi().withThinking('high').withExtraBody({ thinking: { keep: 'all' } })))['thinking']).to.deep.equal({ type: 'enabled', keep: 'all' });
      expect((await body(kimi().withThinking('high').withExtraBody({ thinking: {} })))['thinking']).to.deep.equal({ type: 'enabled' });
      expect((await body(kimi().withExtraBody({ thinking: {} }).withThinking('high')))['thinking']).to.deep.equal({ type: 'enabled' });
      expect((await body(kimi().withExtraBody({ custom: { a: 1 } }).withExtraBody({ custom: { b: 2 } })))['custom']).to.deep.equal({ b: 2 });
    });

    it('does not send OPENAI_ORG_ID / OPENAI_PROJECT_ID from the environment to Moonshot', async () => {
      const saved = { org: process.env['OPENAI_ORG_ID'], project: process.env['OPENAI_PROJECT_ID'] };
      process.env['OPENAI_ORG_ID'] = 'org-should-not-leak';
      process.env['OPENAI_PROJECT_ID'] = 'proj-should-not-leak';
      try {
        await body(kimi());
      } finally {
        restore('OPENAI_ORG_ID', saved.org);
        restore('OPENAI_PROJECT_ID', saved.project);
      }
      expect(ctx.server.lastRequest.headers).to.not.have.any.keys('openai-organization', 'openai-project');
    });

    it('defaults to the Moonshot API base URL', () => {
      expect(new KimiChatProvider({ apiKey: TEST_KEY, model: 'k' }).baseURL).to.equal('https://api.moonshot.ai/v1');
    });

    it('aborts like the OpenAI provider: the server sees the connection close', async () => {
      ctx.server.reply({ type: 'stream', chunks: [completionChunk({ delta: { reasoning_content: 'hmm' } })], done: false, then: 'hang' });
      const controller = new AbortController();
      const stream = await kimi().generate('', [], [user('hi')], { signal: controller.signal });
      const iterator = stream[Symbol.asyncIterator]();
      expect((await iterator.next()).value).to.deep.equal(thinkPart('hmm'));
      controller.abort('stop');
      expect(await rejection(iterator.next())).to.equal('stop');
      expect(await Promise.race([ctx.server.lastRequest.closed, delay(2_000).then(() => 'open')])).to.equal('aborted');
    });
  });
});

function restore(name: string, value: string | undefined): void {
  if (value === undefined) delete process.env[name];
  else process.env[name] = value;
}
