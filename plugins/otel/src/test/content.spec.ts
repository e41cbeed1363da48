import { createMessage, imageURLPart, textPart, thinkPart, toolCall, toolOk, type Message } from '@kosong/core';
import { MockChatProvider } from '@kosong/provider-echo';
import { expect } from 'chai';
import { TRUNCATION_MARKER, inputMessagesJson, outputMessagesJson, toolArgumentsText, toolOutputText } from '../content.js';
import { Telemetry, callParts, kernelWith, testToolset } from './support.js';

const CONTENT_ATTRIBUTES = ['gen_ai.input.messages', 'gen_ai.output.messages', 'gen_ai.tool.call.arguments', 'gen_ai.tool.call.result'];

const conversation: Message[] = [
  createMessage('user', 'What is 1 + 2? My password is hunter2.'),
  createMessage('assistant', 'Let me add.', { toolCalls: [toolCall('old-1', 'add', '{"a":1,"b":2}')] }),
  createMessage('tool', 'result: 3', { toolCallId: 'old-1' }),
  createMessage('user', [textPart('And this picture?'), imageURLPart('https://example.com/cat.png')], { name: 'alice' }),
];

describe('content capture', () => {
  let telemetry: Telemetry;

  beforeEach(() => {
    telemetry = new Telemetry();
  });

  afterEach(async () => {
    await telemetry.shutdown();
  });

  async function runStep(captureContent: boolean | undefined, contentMaxLength?: number): Promise<void> {
    const provider = new MockChatProvider([thinkPart('hmm'), textPart('Adding hunter2. '), ...callParts('c1', 'add', '{"a":3}'), ...callParts('c2', 'fail', '{}')], {
      finishReason: 'tool_calls',
    });
    const toolset = testToolset((call) => (call.id === 'c2' ? 'error' : 'ok'));
    const otel = { ...(captureContent === undefined ? {} : { captureContent }), ...(contentMaxLength === undefined ? {} : { contentMaxLength }) };
    const { kernel } = await kernelWith(telemetry, provider, toolset, { otel });
    await (await kernel.runner().step({ systemPrompt: 'You add.', history: conversation })).toolResults();
    await kernel.dispose();
  }

  for (const setting of [undefined, false] as const) {
    it(`records no content at all when captureContent is ${String(setting)}`, async () => {
      await runStep(setting);
      const spans = telemetry.spans();
      expect(spans).to.have.length(3);
      for (const span of spans) {
        for (const name of CONTENT_ATTRIBUTES) expect(span.attributes, span.name).not.to.have.property(name);
        expect(JSON.stringify(span.attributes)).not.to.match(/hunter2|secret detail|result of/);
        expect(span.status.message).to.equal(undefined);
      }
    });
  }

  it('records input and output messages, tool arguments and results in the GenAI JSON shapes when enabled', async () => {
    await runStep(true);
    const chat = telemetry.span('chat mock');
    expect(JSON.parse(chat.attributes['gen_ai.input.messages'] as string)).to.deep.equal([
      { role: 'user', parts: [{ type: 'text', content: 'What is 1 + 2? My password is hunter2.' }] },
      {
        role: 'assistant',
        parts: [
          { type: 'text', content: 'Let me add.' },
          { type: 'tool_call', id: 'old-1', name: 'add', arguments: { a: 1, b: 2 } },
        ],
      },
      { role: 'tool', parts: [{ type: 'tool_call_response', id: 'old-1', response: 'result: 3' }] },
      {
        role: 'user',
        name: 'alice',
        parts: [
          { type: 'text', content: 'And this picture?' },
          { type: 'uri', modality: 'image', uri: 'https://example.com/cat.png' },
        ],
      },
    ]);
    expect(JSON.parse(chat.attributes['gen_ai.output.messages'] as string)).to.deep.equal([
      {
        role: 'assistant',
        parts: [
          { type: 'reasoning', content: 'hmm' },
          { type: 'text', content: 'Adding hunter2. ' },
          { type: 'tool_call', id: 'c1', name: 'add', arguments: { a: 3 } },
          { type: 'tool_call', id: 'c2', name: 'fail', arguments: {} },
        ],
        finish_reason: 'tool_call',
      },
    ]);
    const add = telemetry.span('execute_tool add');
    expect(add.attributes).to.include({ 'gen_ai.tool.call.arguments': '{"a":3}', 'gen_ai.tool.call.result': 'result of c1' });
    const fail = telemetry.span('execute_tool fail');
    expect(fail.attributes).not.to.have.property('gen_ai.tool.call.result'); // only for calls that succeeded
    expect(fail.status.message).to.equal('secret detail of c2');
  });

  it('caps every content attribute, keeping the JSON valid and the newest input messages', async () => {
    await runStep(true, 20);
    const chat = telemetry.span('chat mock');
    const input = JSON.parse(chat.attributes['gen_ai.input.messages'] as string) as { parts: { content?: string; uri?: string }[] }[];
    expect(input).to.have.length(4);
    // The newest message got the budget first: its text is whole, its URL is cut, older content is empty.
    expect(input[3]!.parts[0]!.content).to.equal('And this picture?');
    expect(input[3]!.parts[1]!.uri).to.equal(`htt${TRUNCATION_MARKER}`);
    expect(input[0]!.parts[0]!.content).to.equal(TRUNCATION_MARKER);
    const output = JSON.parse(chat.attributes['gen_ai.output.messages'] as string) as { parts: { content?: string; arguments?: unknown }[] }[];
    expect(output[0]!.parts.map((p) => p.content ?? p.arguments)).to.deep.equal(['hmm', 'Adding hunter2. ', `{${TRUNCATION_MARKER}`, TRUNCATION_MARKER]);
  });
});

describe('content conversion', () => {
  it('turns data: URIs into blob parts with their MIME type, and other media into uri parts', () => {
    const message = createMessage('user', [imageURLPart('data:image/png;base64,AAAA'), { type: 'audio_url', audioUrl: { url: 'https://a/b.mp3' } }]);
    expect(JSON.parse(inputMessagesJson([message], 1000))).to.deep.equal([
      {
        role: 'user',
        parts: [
          { type: 'blob', modality: 'image', mime_type: 'image/png', content: 'AAAA' },
          { type: 'uri', modality: 'audio', uri: 'https://a/b.mp3' },
        ],
      },
    ]);
  });

  it('keeps arguments that are not JSON, or do not fit, as (capped) text', () => {
    const message = createMessage('assistant', [], { toolCalls: [toolCall('a', 'x', 'not json'), toolCall('b', 'y', null)] });
    expect(JSON.parse(inputMessagesJson([message], 1000))[0].parts).to.deep.equal([
      { type: 'tool_call', id: 'a', name: 'x', arguments: 'not json' },
      { type: 'tool_call', id: 'b', name: 'y', arguments: null },
    ]);
    const big = createMessage('assistant', [], { toolCalls: [toolCall('a', 'x', '{"text":"0123456789"}')] });
    expect(JSON.parse(inputMessagesJson([big], 5))[0].parts[0].arguments).to.equal(`{"tex${TRUNCATION_MARKER}`);
  });

  it('maps finish reasons to the output schema and defaults a missing one to "other"', () => {
    const message = createMessage('assistant', 'hi');
    expect(JSON.parse(outputMessagesJson(message, 'stop', 100))[0].finish_reason).to.equal('stop');
    expect(JSON.parse(outputMessagesJson(message, undefined, 100))[0].finish_reason).to.equal('other');
  });

  it('gives tool arguments and outputs as text, parts as GenAI JSON, capped', () => {
    expect(toolArgumentsText(toolCall('a', 'x', '{"k":"long value"}'), 4)).to.equal(`{"k"${TRUNCATION_MARKER}`);
    expect(toolArgumentsText(toolCall('a', 'x', null), 4)).to.equal(undefined);
    expect(toolOutputText(toolOk({ output: 'short' }), 100)).to.equal('short');
    expect(JSON.parse(toolOutputText(toolOk({ output: [textPart('a'), textPart('b')] }), 100))).to.deep.equal([
      { type: 'text', content: 'a' },
      { type: 'text', content: 'b' },
    ]);
  });
});
