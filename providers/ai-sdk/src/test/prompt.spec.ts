/**
 * The request side, part by part: the history, the system prompt and the tool results as the
 * prompt of the model's spec (v4, v3, v2), read back from what the model's `doStream` was given.
 */
import { ChatProviderError, createMessage, imageURLPart, textPart, thinkPart, toolCall, type Message } from '@kosong/core';
import { expect } from 'chai';

import { aiSdkProvider } from '../ai-sdk-provider.js';
import { toPrompt } from '../prompt.js';
import { encodeReasoningMetadata, TOOL_CALL_METADATA_KEY } from '../provider-metadata.js';
import { collect, finish, GO, modelV2, modelV3, modelV4, rejection, textBlock } from './support.js';

const PNG = 'data:image/png;base64,iVBORw0KGgo=';

/** A conversation with every kind of message: system, user with an image, assistant with reasoning and two calls, their results. */
const CONVERSATION: readonly Message[] = [
  createMessage('user', [textPart('What is in '), imageURLPart('https://example.com/cat.jpg'), textPart(' and '), imageURLPart(PNG)]),
  {
    role: 'assistant',
    content: [thinkPart('Two images.', encodeReasoningMetadata({ anthropic: { signature: 'sig-1' } })), textPart('Looking.')],
    toolCalls: [
      toolCall('call_a', 'lookup', '{"q":"cat"}', { [TOOL_CALL_METADATA_KEY]: { google: { thoughtSignature: 'ts-a' } } }),
      toolCall('call_b', 'describe', null),
    ],
  },
  { role: 'tool', toolCallId: 'call_a', content: [textPart('<system>ok</system>'), textPart('a cat')] },
  { role: 'tool', toolCallId: 'call_b', content: [textPart('an image:'), imageURLPart(PNG)] },
  createMessage('system', 'Be brief.'),
  createMessage('user', 'Thanks.'),
];

describe('aiSdkProvider: the prompt', () => {
  it('the system prompt comes first, then the history in order (v4)', async () => {
    const model = modelV4([...textBlock('t', 'ok'), finish()]);
    await collect(await aiSdkProvider(model).generate('You are terse.', [], CONVERSATION));
    expect(model.doStreamCalls[0]!.prompt).to.deep.equal([
      { role: 'system', content: 'You are terse.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is in ' },
          { type: 'file', mediaType: 'image/jpeg', data: { type: 'url', url: new URL('https://example.com/cat.jpg') } },
          { type: 'text', text: ' and ' },
          { type: 'file', mediaType: 'image/png', data: { type: 'data', data: 'iVBORw0KGgo=' } },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'Two images.', providerOptions: { anthropic: { signature: 'sig-1' } } },
          { type: 'text', text: 'Looking.' },
          { type: 'tool-call', toolCallId: 'call_a', toolName: 'lookup', input: { q: 'cat' }, providerOptions: { google: { thoughtSignature: 'ts-a' } } },
          { type: 'tool-call', toolCallId: 'call_b', toolName: 'describe', input: {} },
        ],
      },
      {
        role: 'tool',
        content: [
          { type: 'tool-result', toolCallId: 'call_a', toolName: 'lookup', output: { type: 'text', value: '<system>ok</system>a cat' } },
          {
            type: 'tool-result',
            toolCallId: 'call_b',
            toolName: 'describe',
            output: { type: 'content', value: [{ type: 'text', text: 'an image:' }, { type: 'file', mediaType: 'image/png', data: { type: 'data', data: 'iVBORw0KGgo=' } }] },
          },
        ],
      },
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: [{ type: 'text', text: 'Thanks.' }] },
    ]);
  });

  it('v3: files as base64 data or URLs, tool-result media as image-data / image-url', () => {
    const prompt = toPrompt('v3', '', [
      createMessage('user', [imageURLPart('https://example.com/a.webp')]),
      { role: 'assistant', content: [], toolCalls: [toolCall('c', 'shot', '{}')] },
      { role: 'tool', toolCallId: 'c', content: [imageURLPart(PNG), imageURLPart('https://example.com/b.png')] },
    ]);
    expect(prompt).to.deep.equal([
      { role: 'user', content: [{ type: 'file', mediaType: 'image/webp', data: new URL('https://example.com/a.webp') }] },
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c', toolName: 'shot', input: {} }] },
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'c',
            toolName: 'shot',
            output: { type: 'content', value: [{ type: 'image-data', data: 'iVBORw0KGgo=', mediaType: 'image/png' }, { type: 'image-url', url: 'https://example.com/b.png' }] },
          },
        ],
      },
    ]);
  });

  it('v2: tool-result media as base64 `media`; a URL there is refused, naming the message', async () => {
    expect(toPrompt('v2', '', [{ role: 'assistant', content: [], toolCalls: [toolCall('c', 'shot', '{}')] }, { role: 'tool', toolCallId: 'c', content: [imageURLPart(PNG)] }])[1]).to.deep.equal({
      role: 'tool',
      content: [{ type: 'tool-result', toolCallId: 'c', toolName: 'shot', output: { type: 'content', value: [{ type: 'media', data: 'iVBORw0KGgo=', mediaType: 'image/png' }] } }],
    });
    const model = modelV2([]);
    const caught = await rejection(aiSdkProvider(model).generate('', [], [{ role: 'assistant', content: [], toolCalls: [toolCall('c', 'shot', '{}')] }, { role: 'tool', toolCallId: 'c', content: [imageURLPart('https://example.com/b.png')] }]));
    expect(ChatProviderError.isInstance(caught)).to.equal(true);
    expect((caught as Error).message).to.contain('message 1 (tool)').and.contain('data: URIs only');
    expect(model.doStreamCalls).to.have.length(0);
  });

  it('audio and video go as files of their kind; a data: URI that is not base64 is encoded', () => {
    const prompt = toPrompt('v4', '', [
      createMessage('user', [
        { type: 'audio_url', audioUrl: { url: 'https://example.com/a.mp3' } },
        { type: 'video_url', videoUrl: { url: 'https://example.com/clip' } },
        imageURLPart('data:image/svg+xml,%3Csvg%2F%3E'),
      ]),
    ]);
    expect(prompt[0]).to.deep.equal({
      role: 'user',
      content: [
        { type: 'file', mediaType: 'audio/mpeg', data: { type: 'url', url: new URL('https://example.com/a.mp3') } },
        { type: 'file', mediaType: 'video/*', data: { type: 'url', url: new URL('https://example.com/clip') } },
        { type: 'file', mediaType: 'image/svg+xml', data: { type: 'data', data: Buffer.from('<svg/>').toString('base64') } },
      ],
    });
  });

  it('think parts: of the assistant only; a signature of another provider goes as text only; an empty unsigned one is left out', () => {
    const prompt = toPrompt('v4', '', [
      { role: 'user', content: [thinkPart('user thoughts'), textPart('hi')] },
      { role: 'assistant', content: [thinkPart('native', 'EqQBCkgIARABGAIiQ'), thinkPart(''), textPart('yes')] },
    ]);
    expect(prompt).to.deep.equal([
      { role: 'user', content: [{ type: 'text', text: 'hi' }] },
      { role: 'assistant', content: [{ type: 'reasoning', text: 'native' }, { type: 'text', text: 'yes' }] },
    ]);
  });

  it('leaves out empty text and messages left empty; tool-call arguments that are not JSON go as their text', () => {
    const prompt = toPrompt('v4', '', [
      createMessage('user', ''),
      { role: 'assistant', content: [textPart('')] },
      { role: 'assistant', content: [], toolCalls: [toolCall('c', 'f', '{not json')] },
      createMessage('system', ''),
    ]);
    expect(prompt).to.deep.equal([{ role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c', toolName: 'f', input: '{not json' }] }]);
  });

  it('consecutive tool results are one tool message, in the order of the history (call order)', () => {
    const history: Message[] = [
      { role: 'assistant', content: [], toolCalls: [toolCall('1', 'a', '{}'), toolCall('2', 'b', '{}'), toolCall('3', 'a', '{}')] },
      ...['1', '2', '3'].map((id): Message => ({ role: 'tool', toolCallId: id, content: [textPart(`result ${id}`)] })),
    ];
    const [, tools] = toPrompt('v4', '', history);
    expect((tools!.content as { toolCallId: string; toolName: string }[]).map((part) => [part.toolCallId, part.toolName])).to.deep.equal([
      ['1', 'a'],
      ['2', 'b'],
      ['3', 'a'],
    ]);
  });

  it("a tool message answering a call not in the history takes the tool's name from its `name`, or is refused", () => {
    expect(toPrompt('v4', '', [{ role: 'tool', toolCallId: 'x', name: 'lookup', content: [textPart('r')] }])).to.deep.equal([
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'x', toolName: 'lookup', output: { type: 'text', value: 'r' } }] },
    ]);
    expect(() => toPrompt('v4', '', [{ role: 'tool', toolCallId: 'x', content: [textPart('r')] }])).to.throw(ChatProviderError, /message 0 \(tool\).*"x"/);
    expect(() => toPrompt('v4', '', [{ role: 'tool', content: [textPart('r')] }])).to.throw(ChatProviderError, /toolCallId/);
  });

  it('refuses a malformed image URL and a data: URI without data, naming the message', () => {
    expect(() => toPrompt('v4', '', [createMessage('user', [imageURLPart('not a url')])])).to.throw(ChatProviderError, /message 0 \(user\)/);
    expect(() => toPrompt('v4', '', [createMessage('user', [imageURLPart('data:image/png;base64')])])).to.throw(ChatProviderError, /comma/);
  });

  it('v3 and v2 models get the same history in their own terms', async () => {
    const v3 = modelV3([{ type: 'text-delta', id: 't', delta: 'ok' }, finish()] as never);
    await collect(await aiSdkProvider(v3).generate('sys', [], GO));
    expect(v3.doStreamCalls[0]!.prompt).to.deep.equal([
      { role: 'system', content: 'sys' },
      { role: 'user', content: [{ type: 'text', text: 'go' }] },
    ]);
    const v2 = modelV2([{ type: 'text-delta', id: 't', delta: 'ok' }, { type: 'finish', finishReason: 'stop', usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 } }]);
    await collect(await aiSdkProvider(v2).generate('sys', [], GO));
    expect(v2.doStreamCalls[0]!.prompt).to.deep.equal(v3.doStreamCalls[0]!.prompt);
  });
});
