import { audioURLPart, ChatProviderError, createMessage, imageURLPart, textPart, thinkPart, toolCall, videoURLPart } from '@kosong/core';
import { expect } from 'chai';

import { KimiChatProvider, OpenAIChatProvider, type OpenAIChatProviderOptions } from '../index.js';
import { COMMON_CASES, COMMON_SNAPSHOTS, KIMI_CASES, type RequestCase } from './fixtures.js';
import { collect, rejection, TEST_KEY, user, useServer } from './support.js';

type Body = Record<string, unknown>;

describe('request bodies, as the server receives them (kosong spec §7)', () => {
  const ctx = useServer();

  async function send(provider: KimiChatProvider | OpenAIChatProvider, request: RequestCase): Promise<Body> {
    await collect(await provider.generate(request.system, request.tools, request.history));
    return ctx.server.lastRequest.body as Body;
  }

  const kimi = (): KimiChatProvider => new KimiChatProvider({ baseURL: ctx.server.baseURL, apiKey: TEST_KEY, model: 'kimi-k2-turbo-preview' });
  const openai = (options: Partial<OpenAIChatProviderOptions> = {}): OpenAIChatProvider =>
    new OpenAIChatProvider({ baseURL: ctx.server.baseURL, apiKey: TEST_KEY, model: 'gpt-4.1', ...options });

  describe('KimiChatProvider', () => {
    for (const [name, request] of Object.entries(COMMON_CASES)) {
      it(`COMMON_CASES ${name}`, async () => {
        const body = await send(kimi(), request);
        expect({ messages: body['messages'], tools: body['tools'] }).to.deep.equal(COMMON_SNAPSHOTS[name]);
      });
    }
    for (const [name, { expected, ...request }] of Object.entries(KIMI_CASES)) {
      it(`Kimi case ${name}`, async () => {
        const body = await send(kimi(), request);
        expect({ messages: body['messages'], tools: body['tools'] }).to.deep.equal(expected);
      });
    }

    it('sends model, stream and stream_options, and no completion cap by default', async () => {
      const body = await send(kimi(), COMMON_CASES['simple_user_message']!);
      expect(body).to.deep.equal({ model: 'kimi-k2-turbo-preview', ...COMMON_SNAPSHOTS['simple_user_message'], stream: true, stream_options: { include_usage: true } });
    });

    it('fills missing property types in tool schemas without touching the tool', async () => {
      const parameters = { type: 'object', properties: { mode: { enum: ['a', 'b'], description: 'How' }, n: { type: 'integer' } } };
      const tool = { name: 'pick', description: 'Pick.', parameters };
      const body = await send(kimi(), { system: '', tools: [tool], history: [user('go')] });
      expect(body['tools']).to.deep.equal([
        { type: 'function', function: { name: 'pick', description: 'Pick.', parameters: { type: 'object', properties: { mode: { enum: ['a', 'b'], description: 'How', type: 'string' }, n: { type: 'integer' } } } } },
      ]);
      expect(parameters.properties.mode).to.not.have.property('type');
    });
  });

  describe('OpenAIChatProvider', () => {
    for (const [name, request] of Object.entries(COMMON_CASES)) {
      it(`COMMON_CASES ${name}`, async () => {
        const body = await send(openai(), request);
        const snapshot = COMMON_SNAPSHOTS[name]!;
        expect(body['messages']).to.deep.equal(snapshot.messages);
        // The OpenAI API rejects `tools: []` (the Python original sends it): an empty list is left out.
        if (snapshot.tools.length === 0) expect(body).to.not.have.property('tools');
        else expect(body['tools']).to.deep.equal(snapshot.tools);
      });
    }

    it('sends model, stream and stream_options and nothing else by default', async () => {
      const body = await send(openai(), COMMON_CASES['simple_user_message']!);
      expect(body).to.deep.equal({ model: 'gpt-4.1', messages: COMMON_SNAPSHOTS['simple_user_message']!.messages, stream: true, stream_options: { include_usage: true } });
    });

    it('sends the system prompt and system messages as `developer` when configured', async () => {
      const body = await send(openai({ systemRole: 'developer' }), { system: 'Be brief.', tools: [], history: [user('hi'), createMessage('system', 'Now in French.')] });
      expect(body['messages']).to.deep.equal([
        { role: 'developer', content: 'Be brief.' },
        { role: 'user', content: 'hi' },
        { role: 'developer', content: 'Now in French.' },
      ]);
    });

    it('drops think parts by default and sends them under `reasoningKey` when set', async () => {
      const history = [user('What is 2+2?'), createMessage('assistant', [thinkPart('Thinking...'), textPart('4.')])];
      expect((await send(openai(), { system: '', tools: [], history }))['messages']).to.deep.equal([
        { role: 'user', content: 'What is 2+2?' },
        { role: 'assistant', content: '4.' },
      ]);
      const body = await send(openai({ reasoningKey: 'reasoning_content' }), { system: '', tools: [], history });
      expect(body['messages']).to.deep.equal([
        { role: 'user', content: 'What is 2+2?' },
        { role: 'assistant', content: '4.', reasoning_content: 'Thinking...' },
      ]);
      // spec §7.3: with a reasoning key, think parts in the history ask for reasoning
      expect(body['reasoning_effort']).to.equal('medium');
      const empty = [user('q'), createMessage('assistant', [thinkPart(''), textPart('4.')])];
      expect(((await send(openai({ reasoningKey: 'reasoning_content' }), { system: '', tools: [], history: empty }))['messages'] as Body[])[1]).to.deep.equal({
        role: 'assistant',
        content: '4.',
        reasoning_content: '',
      });
    });

    it('asks for no reasoning effort without think parts in the history, or without a reasoning key', async () => {
      expect(await send(openai({ reasoningKey: 'reasoning_content' }), { system: '', tools: [], history: [user('hi')] })).to.not.have.property('reasoning_effort');
      const history = [user('q'), createMessage('assistant', [thinkPart('t'), textPart('a')]), user('q2')];
      expect(await send(openai(), { system: '', tools: [], history })).to.not.have.property('reasoning_effort');
    });

    it('maps withThinking to reasoning_effort (max → xhigh; off → omitted, or "none" when configured)', async () => {
      const request = { system: '', tools: [], history: [user('hi')] };
      const cases = [
        ['low', 'low'],
        ['medium', 'medium'],
        ['high', 'high'],
        ['xhigh', 'xhigh'],
        ['max', 'xhigh'],
      ] as const;
      for (const [effort, sent] of cases) {
        const provider = openai().withThinking(effort);
        expect((await send(provider, request))['reasoning_effort'], effort).to.equal(sent);
        expect(provider.thinkingEffort).to.equal(sent);
      }
      const off = openai().withThinking('off');
      expect(off.thinkingEffort).to.equal('off');
      expect(await send(off, request)).to.not.have.property('reasoning_effort');
      expect((await send(openai({ thinkingOff: 'none' }).withThinking('off'), request))['reasoning_effort']).to.equal('none');
      // an explicit effort wins over the automatic one
      const history = [user('q'), createMessage('assistant', [thinkPart('t'), textPart('a')]), user('q2')];
      expect((await send(openai({ reasoningKey: 'reasoning_content' }).withThinking('low'), { ...request, history }))['reasoning_effort']).to.equal('low');
    });

    it('passes generation options as snake_case fields, extraBody last', async () => {
      const provider = openai({
        generation: { temperature: 0.7, maxCompletionTokens: 2048, topP: 0.9, stop: ['END'], seed: 7, parallelToolCalls: false },
      }).withGenerationOptions({ presencePenalty: 0.1, frequencyPenalty: 0.2, promptCacheKey: 'k1', toolChoice: 'auto', maxTokens: 99, extraBody: { service_tier: 'flex' } });
      const body = await send(provider, { system: '', tools: [], history: [user('hi')] });
      expect(body).to.include({
        temperature: 0.7,
        max_completion_tokens: 2048,
        max_tokens: 99,
        top_p: 0.9,
        seed: 7,
        parallel_tool_calls: false,
        presence_penalty: 0.1,
        frequency_penalty: 0.2,
        prompt_cache_key: 'k1',
        tool_choice: 'auto',
        service_tier: 'flex',
      });
      expect(body['stop']).to.deep.equal(['END']);
      expect(provider.generationOptions).to.include({ temperature: 0.7, presencePenalty: 0.1 });
    });

    it('leaves out content of an assistant tool-call message without text, and tool calls without arguments get "{}"', async () => {
      const history = [user('go'), createMessage('assistant', [textPart('  ')], { toolCalls: [toolCall('c1', 'now', null)] }), createMessage('tool', 'noon', { toolCallId: 'c1' })];
      expect((await send(openai(), { system: '', tools: [], history }))['messages']).to.deep.equal([
        { role: 'user', content: 'go' },
        { role: 'assistant', tool_calls: [{ type: 'function', id: 'c1', function: { name: 'now', arguments: '{}' } }] },
        { role: 'tool', content: 'noon', tool_call_id: 'c1' },
      ]);
    });

    it('joins the text of tool messages when `toolMessageContent` is `text`', async () => {
      const request = COMMON_CASES['parallel_tool_calls']!;
      const messages = (await send(openai({ toolMessageContent: 'text' }), request))['messages'] as Body[];
      expect(messages[2]).to.deep.equal({ role: 'tool', content: '<system-reminder>This is a system reminder</system-reminder>\n5', tool_call_id: 'call_add' });
      const withImage = (await send(openai({ toolMessageContent: 'text' }), COMMON_CASES['tool_call_with_image']!))['messages'] as Body[];
      expect(withImage[2]).to.deep.equal({ role: 'tool', content: '5', tool_call_id: 'call_abc123' });
    });

    it('sends base64 WAV/MP3 audio as input_audio, and rejects other audio and video with a clear error', async () => {
      const history = [createMessage('user', [textPart('Listen'), audioURLPart('data:audio/wav;base64,UklGRg=='), audioURLPart('data:audio/mpeg;base64,SUQz')])];
      expect((await send(openai(), { system: '', tools: [], history }))['messages']).to.deep.equal([
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Listen' },
            { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } },
            { type: 'input_audio', input_audio: { data: 'SUQz', format: 'mp3' } },
          ],
        },
      ]);
      const requests = ctx.server.requests.length;
      const audio = await rejection(openai().generate('', [], [createMessage('user', [audioURLPart('https://example.com/a.ogg')])]));
      expect(ChatProviderError.isInstance(audio)).to.equal(true);
      expect((audio as Error).message).to.match(/message 0, part 0.*WAV or MP3.*unsupportedMedia/);
      const video = await rejection(openai().generate('', [], [user('hi'), createMessage('user', [textPart('Watch'), videoURLPart('https://example.com/v.mp4')])]));
      expect((video as Error).message).to.match(/message 1, part 1.*no video input/);
      expect(ctx.server.requests.length, 'nothing is sent').to.equal(requests);
    });

    it('passes audio_url and video_url parts through with `unsupportedMedia: passthrough`', async () => {
      const history = [createMessage('user', [audioURLPart('https://example.com/a.ogg'), videoURLPart('https://example.com/v.mp4', 'v1'), imageURLPart('https://example.com/i.png', 'i1')])];
      expect((await send(openai({ unsupportedMedia: 'passthrough' }), { system: '', tools: [], history }))['messages']).to.deep.equal([
        {
          role: 'user',
          content: [
            { type: 'audio_url', audio_url: { url: 'https://example.com/a.ogg', id: null } },
            { type: 'video_url', video_url: { url: 'https://example.com/v.mp4', id: 'v1' } },
            { type: 'image_url', image_url: { url: 'https://example.com/i.png', id: 'i1' } },
          ],
        },
      ]);
    });
  });
});
