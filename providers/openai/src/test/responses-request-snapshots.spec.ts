import {
  audioURLPart,
  ChatProviderError,
  createMessage,
  imageURLPart,
  InvalidGenerationOptionError,
  textPart,
  thinkPart,
  toolCall,
  UnsupportedGenerationOptionError,
  type Message,
  type Tool,
} from '@kosong/core';
import { expect } from 'chai';

import type { OpenAIResponsesChatProvider } from '../index.js';
import { ADD_TOOL, COMMON_CASES, MUL_TOOL, type RequestCase } from './fixtures.js';
import { lastBody, useResponsesServer } from './responses-support.js';
import { collect, rejection, user } from './support.js';

type Body = Record<string, unknown>;

const IMAGE = 'https://example.com/image.png';
const REMINDER = '<system-reminder>This is a system reminder</system-reminder>';
const userItem = (text: string): object => ({ content: [{ type: 'input_text', text }], role: 'user', type: 'message' });
const assistantItem = (text: string): object => ({ content: [{ type: 'output_text', text, annotations: [] }], role: 'assistant', type: 'message' });
const addTool = { type: 'function', name: 'add', description: 'Add two integers.', parameters: ADD_TOOL.parameters, strict: false };
const mulTool = { ...addTool, name: 'multiply', description: 'Multiply two integers.' };
const addCall = { arguments: '{"a": 2, "b": 3}', call_id: 'call_abc123', name: 'add', type: 'function_call' };

/** The `input` and `tools` of each COMMON_CASES request, model `gpt-4.1` (kosong spec §7.4). */
const SNAPSHOTS: Readonly<Record<string, { readonly input: unknown[]; readonly tools: unknown[] }>> = {
  simple_user_message: { input: [{ role: 'developer', content: 'You are helpful.' }, userItem('Hello!')], tools: [] },
  multi_turn_conversation: { input: [userItem('What is 2+2?'), assistantItem('2+2 equals 4.'), userItem('And 3+3?')], tools: [] },
  multi_turn_with_system: {
    input: [{ role: 'developer', content: 'You are a math tutor.' }, userItem('What is 2+2?'), assistantItem('2+2 equals 4.'), userItem('And 3+3?')],
    tools: [],
  },
  image_url: {
    input: [
      {
        content: [
          { type: 'input_text', text: "What's in this image?" },
          { type: 'input_image', detail: 'auto', image_url: IMAGE },
        ],
        role: 'user',
        type: 'message',
      },
    ],
    tools: [],
  },
  tool_definition: { input: [userItem('Add 2 and 3')], tools: [addTool, mulTool] },
  tool_call: {
    input: [
      userItem('Add 2 and 3'),
      assistantItem("I'll add those numbers for you."),
      addCall,
      { call_id: 'call_abc123', output: [{ type: 'input_text', text: '5' }], type: 'function_call_output' },
    ],
    tools: [],
  },
  tool_call_with_image: {
    input: [
      userItem('Add 2 and 3'),
      assistantItem("I'll add those numbers for you."),
      addCall,
      {
        call_id: 'call_abc123',
        output: [
          { type: 'input_text', text: '5' },
          { type: 'input_image', image_url: IMAGE },
        ],
        type: 'function_call_output',
      },
    ],
    tools: [],
  },
  parallel_tool_calls: {
    input: [
      userItem('Calculate 2+3 and 4*5'),
      assistantItem("I'll calculate both."),
      { arguments: '{"a": 2, "b": 3}', call_id: 'call_add', name: 'add', type: 'function_call' },
      { arguments: '{"a": 4, "b": 5}', call_id: 'call_mul', name: 'multiply', type: 'function_call' },
      {
        call_id: 'call_add',
        output: [
          { type: 'input_text', text: REMINDER },
          { type: 'input_text', text: '5' },
        ],
        type: 'function_call_output',
      },
      {
        call_id: 'call_mul',
        output: [
          { type: 'input_text', text: REMINDER },
          { type: 'input_text', text: '20' },
        ],
        type: 'function_call_output',
      },
    ],
    tools: [addTool, mulTool],
  },
};

describe('OpenAIResponsesChatProvider request bodies, as the server receives them (kosong spec §7.4, §10 tests 118–125)', () => {
  const ctx = useResponsesServer();

  async function send(provider: OpenAIResponsesChatProvider, request: RequestCase): Promise<Body> {
    await collect(await provider.generate(request.system, request.tools, request.history));
    return lastBody(ctx.server);
  }
  const gpt41 = (): OpenAIResponsesChatProvider => ctx.provider({ model: 'gpt-4.1' });

  for (const [name, request] of Object.entries(COMMON_CASES)) {
    it(`COMMON_CASES ${name}`, async () => {
      const body = await send(gpt41(), request);
      expect({ input: body['input'], tools: body['tools'] }).to.deep.equal(SNAPSHOTS[name]);
    });
  }

  it('assistant_with_reasoning: the think part is a reasoning item with its summary and encrypted content, before the message', async () => {
    const history = [user('What is 2+2?'), createMessage('assistant', [thinkPart('Thinking...', 'enc_abc'), textPart('4.')])];
    const body = await send(gpt41(), { system: '', tools: [], history });
    expect(body['input']).to.deep.equal([
      userItem('What is 2+2?'),
      { summary: [{ type: 'summary_text', text: 'Thinking...' }], type: 'reasoning', encrypted_content: 'enc_abc' },
      assistantItem('4.'),
    ]);
  });

  it('the whole body: stream, model, input, tools, store false; no reasoning, no include by default (test 120)', async () => {
    const body = await send(gpt41(), COMMON_CASES['simple_user_message']!);
    expect(body).to.deep.equal({ stream: true, model: 'gpt-4.1', ...SNAPSHOTS['simple_user_message'], store: false });
  });

  it('generation options of its own: temperature 0.7 and max_output_tokens 2048 (test 119), extraBody last', async () => {
    const provider = gpt41().withGenerationOptions({ temperature: 0.7, maxOutputTokens: 2048, promptCacheKey: 'k', extraBody: { service_tier: 'flex', temperature: 0.1 } });
    const body = await send(provider, COMMON_CASES['simple_user_message']!);
    expect(body).to.include({ max_output_tokens: 2048, prompt_cache_key: 'k', service_tier: 'flex', temperature: 0.1 });
  });

  describe('thinking (tests 121–125)', () => {
    const reasoningOf = async (provider: OpenAIResponsesChatProvider): Promise<{ reasoning: unknown; include: unknown }> => {
      const body = await send(provider, COMMON_CASES['simple_user_message']!);
      return { reasoning: body['reasoning'], include: body['include'] };
    };

    it('off sends neither reasoning nor include; thinkingOff "none" sends effort none only', async () => {
      expect(await reasoningOf(gpt41().withThinking('off'))).to.deep.equal({ reasoning: undefined, include: undefined });
      expect(await reasoningOf(ctx.provider({ thinkingOff: 'none' }).withThinking('off'))).to.deep.equal({ reasoning: { effort: 'none' }, include: undefined });
    });

    for (const [effort, sent] of [['low', 'low'], ['medium', 'medium'], ['high', 'high'], ['xhigh', 'xhigh'], ['max', 'xhigh']] as const) {
      it(`${effort}: reasoning {effort: ${sent}, summary: auto} and the encrypted content included`, async () => {
        const model = effort === 'xhigh' ? 'gpt-5.1-codex-max' : 'gpt-4.1';
        expect(await reasoningOf(ctx.provider({ model }).withThinking(effort))).to.deep.equal({
          reasoning: { effort: sent, summary: 'auto' },
          include: ['reasoning.encrypted_content'],
        });
      });
    }
  });

  describe('how messages become items', () => {
    it('a model of no OpenAI family gets the system role; systemRole overrides; a system message mid-history takes it too', async () => {
      const history = [user('hi'), createMessage('system', 'Be brief.')];
      const other = await send(ctx.provider({ model: 'qwen3-32b' }), { system: 'S', tools: [], history });
      expect(other['input']).to.deep.equal([{ role: 'system', content: 'S' }, userItem('hi'), { content: [{ type: 'input_text', text: 'Be brief.' }], role: 'system', type: 'message' }]);
      for (const model of ['gpt-5.1', 'o3', 'o4-mini', 'chatgpt-4o-latest', 'codex-mini-latest', 'computer-use-preview']) {
        const input = (await send(ctx.provider({ model }), { system: 'S', tools: [], history: [user('hi')] }))['input'] as { role: string }[];
        expect(input[0]!.role, model).to.equal('developer');
      }
      const forced = await send(ctx.provider({ model: 'gpt-5.1', systemRole: 'system' }), { system: 'S', tools: [], history: [user('hi')] });
      expect((forced['input'] as { role: string }[])[0]!.role).to.equal('system');
    });

    it('consecutive think parts with the same encrypted content are one reasoning item; a new one starts a new item; text between splits the message', async () => {
      const assistant = createMessage(
        'assistant',
        [thinkPart('A', 'enc_1'), thinkPart('B', 'enc_1'), thinkPart('C', 'enc_2'), textPart('one'), thinkPart('D'), thinkPart('E'), textPart('two'), textPart('')],
        { toolCalls: [toolCall('call_1', 'f', null)] },
      );
      const body = await send(gpt41(), { system: '', tools: [], history: [user('q'), assistant] });
      expect(body['input']).to.deep.equal([
        userItem('q'),
        {
          summary: [
            { type: 'summary_text', text: 'A' },
            { type: 'summary_text', text: 'B' },
          ],
          type: 'reasoning',
          encrypted_content: 'enc_1',
        },
        { summary: [{ type: 'summary_text', text: 'C' }], type: 'reasoning', encrypted_content: 'enc_2' },
        assistantItem('one'),
        {
          summary: [
            { type: 'summary_text', text: 'D' },
            { type: 'summary_text', text: 'E' },
          ],
          type: 'reasoning',
          encrypted_content: null,
        },
        assistantItem('two'),
        { arguments: '{}', call_id: 'call_1', name: 'f', type: 'function_call' },
      ]);
    });

    it('an assistant message with only tool calls (or empty text) sends no empty message; think parts of user messages are dropped', async () => {
      const history: Message[] = [
        createMessage('user', [thinkPart('not mine'), textPart('q')]),
        createMessage('assistant', [textPart('')], { toolCalls: [toolCall('c', 'f', '{"x":1}')] }),
        createMessage('tool', [], { toolCallId: 'c' }),
      ];
      const body = await send(gpt41(), { system: '', tools: [], history });
      expect(body['input']).to.deep.equal([userItem('q'), { arguments: '{"x":1}', call_id: 'c', name: 'f', type: 'function_call' }, { call_id: 'c', output: '', type: 'function_call_output' }]);
    });

    it('audio: http(s) URLs as file_url, base64 MP3/WAV data URIs as file_data (with a file name in messages)', async () => {
      const history: Message[] = [
        createMessage('user', [audioURLPart('https://example.com/a.mp3'), audioURLPart('data:audio/mpeg;base64,QUJD'), audioURLPart('data:audio/wav;base64,REVG')]),
        createMessage('assistant', '', { toolCalls: [toolCall('c', 'listen', '{}')] }),
        createMessage('tool', [textPart('heard'), audioURLPart('data:audio/mp3;base64,R0hJ'), imageURLPart('data:image/png;base64,AAAA')], { toolCallId: 'c' }),
      ];
      const body = await send(gpt41(), { system: '', tools: [], history });
      expect(body['input']).to.deep.equal([
        {
          content: [
            { type: 'input_file', file_url: 'https://example.com/a.mp3' },
            { type: 'input_file', file_data: 'QUJD', filename: 'inline.mp3' },
            { type: 'input_file', file_data: 'REVG', filename: 'inline.wav' },
          ],
          role: 'user',
          type: 'message',
        },
        { arguments: '{}', call_id: 'c', name: 'listen', type: 'function_call' },
        {
          call_id: 'c',
          output: [
            { type: 'input_text', text: 'heard' },
            { type: 'input_file', file_data: 'R0hJ' },
            { type: 'input_image', image_url: 'data:image/png;base64,AAAA' },
          ],
          type: 'function_call_output',
        },
      ]);
    });

    it('toolMessageContent text: the output is the text parts joined with newlines', async () => {
      const history = [...COMMON_CASES['parallel_tool_calls']!.history];
      const body = await send(ctx.provider({ model: 'gpt-4.1', toolMessageContent: 'text' }), { system: '', tools: [], history });
      expect((body['input'] as object[]).slice(-2)).to.deep.equal([
        { call_id: 'call_add', output: `${REMINDER}\n5`, type: 'function_call_output' },
        { call_id: 'call_mul', output: `${REMINDER}\n20`, type: 'function_call_output' },
      ]);
    });

    it('strictTools: every function tool is strict', async () => {
      const body = await send(ctx.provider({ strictTools: true }), { system: '', tools: [ADD_TOOL], history: [user('add')] });
      expect(body['tools']).to.deep.equal([{ ...addTool, strict: true }]);
    });

    it('refuses, before any request, what the API cannot take: video, other audio, a tool message without its call id', async () => {
      const cases: [Message, RegExp][] = [
        [createMessage('user', [textPart('x'), { type: 'video_url', videoUrl: { url: 'https://v.mp4' } }]), /video of message 0, part 1: the Responses API has no video input/],
        [createMessage('user', [audioURLPart('data:audio/ogg;base64,AAAA')]), /audio of message 0, part 0: .*MP3 or WAV \(got a data:audio\/ogg;… URI\)/],
        [createMessage('user', [audioURLPart('ftp://x/a.mp3')]), /audio of message 0, part 0/],
        [createMessage('tool', 'result'), /message 0: a tool message needs the toolCallId/],
      ];
      for (const [message, pattern] of cases) {
        const error = await rejection(gpt41().generate('', [], [message]));
        expect(ChatProviderError.isInstance(error), String(error)).to.equal(true);
        expect((error as Error).message).to.match(pattern);
      }
      expect(ctx.server.requests).to.have.length(0);
    });

    it('leaves the history and the tools it was given as they were', async () => {
      const request = COMMON_CASES['parallel_tool_calls']!;
      const before = structuredClone({ history: request.history, tools: request.tools });
      await send(gpt41(), request);
      expect({ history: request.history, tools: request.tools }).to.deep.equal(before);
    });
  });

  describe('neutral generation options', () => {
    const tools: Tool[] = [ADD_TOOL, MUL_TOOL];

    it('maxOutputTokens, temperature, topP, toolChoice, parallelToolCalls on the wire; per call over the provider; over its own options', async () => {
      const provider = gpt41()
        .withGenerationOptions({ maxOutputTokens: 9, temperature: 1, parallelToolCalls: true, toolChoice: 'required' })
        .withGeneration({ maxOutputTokens: 100, topP: 0.5 });
      await collect(await provider.generate('', tools, [user('go')], { generation: { temperature: 0.2, toolChoice: { type: 'tool', name: 'multiply' }, parallelToolCalls: false } }));
      expect(lastBody(ctx.server)).to.include({ max_output_tokens: 100, temperature: 0.2, top_p: 0.5, parallel_tool_calls: false });
      expect(lastBody(ctx.server)['tool_choice']).to.deep.equal({ type: 'function', name: 'multiply' });
      await collect(await gpt41().generate('', tools, [user('go')], { generation: { toolChoice: 'none' } }));
      expect(lastBody(ctx.server)['tool_choice']).to.equal('none');
    });

    it('stop sequences and a seed: UnsupportedGenerationOptionError naming them, before any request; an empty stopSequences is fine', async () => {
      for (const generation of [{ stopSequences: ['END'] }, { seed: 7 }] as const) {
        const error = await rejection(gpt41().generate('', tools, [user('go')], { generation }));
        expect(UnsupportedGenerationOptionError.isInstance(error), String(error)).to.equal(true);
        expect(error).to.include({ provider: 'openai-responses', option: Object.keys(generation)[0] });
      }
      const onProvider = await rejection(gpt41().withGeneration({ seed: 1 }).generate('', tools, [user('go')]));
      expect(UnsupportedGenerationOptionError.isInstance(onProvider)).to.equal(true);
      expect(ctx.server.requests).to.have.length(0);
      await collect(await gpt41().generate('', tools, [user('go')], { generation: { stopSequences: [] } }));
      expect(lastBody(ctx.server)).to.not.have.property('stop');
    });

    it('without tools: no parallel_tool_calls and no tool_choice auto/none; a bad value is an InvalidGenerationOptionError', async () => {
      await collect(await gpt41().generate('', [], [user('go')], { generation: { parallelToolCalls: false, toolChoice: 'none' } }));
      expect(lastBody(ctx.server)).to.not.have.any.keys('parallel_tool_calls', 'tool_choice');
      const error = await rejection(gpt41().generate('', [], [user('go')], { generation: { toolChoice: 'required' } }));
      expect(InvalidGenerationOptionError.isInstance(error)).to.equal(true);
    });
  });
});
