import { audioURLPart, ChatProviderError, createMessage, imageURLPart, textPart, thinkPart, toolCall, type Message, type ThinkingEffort } from '@kosong/core';
import { expect } from 'chai';
import sinon from 'sinon';

import { redactedThinkPart, type AnthropicChatProvider, type AnthropicChatProviderOptions } from '../index.js';
import { ADD_TOOL, CASES, MUL_TOOL, SNAPSHOTS, type RequestCase } from './fixtures.js';
import { collect, providerFor, rejection, user, useServer } from './support.js';

type Body = Record<string, unknown>;

describe('AnthropicChatProvider request bodies, as the server receives them (kosong spec §7.5)', () => {
  const ctx = useServer();

  const provider = (options: Partial<AnthropicChatProviderOptions> = {}): AnthropicChatProvider => providerFor(ctx.server, options);

  async function send(chat: AnthropicChatProvider, request: RequestCase): Promise<Body> {
    await collect(await chat.generate(request.system, request.tools, request.history));
    return ctx.server.lastRequest.body as Body;
  }

  const history = (...messages: Message[]): RequestCase => ({ system: '', tools: [], history: messages });

  describe('message conversion snapshots', () => {
    for (const [name, request] of Object.entries(CASES)) {
      it(name, async () => {
        const body = await send(provider(), request);
        const snapshot = SNAPSHOTS[name]!;
        expect(body['messages']).to.deep.equal(snapshot.messages);
        expect(body['tools']).to.deep.equal(snapshot.tools);
        if (snapshot.system === undefined) expect(body).to.not.have.property('system');
        else expect(body['system']).to.deep.equal(snapshot.system);
      });
    }
  });

  it('sends model, max_tokens, messages, system, tools and stream, and nothing else by default', async () => {
    const body = await send(provider(), CASES['simple_user_message']!);
    expect(body).to.deep.equal({ model: 'claude-sonnet-4-20250514', max_tokens: 1024, ...SNAPSHOTS['simple_user_message'], stream: true });
    expect(ctx.server.lastRequest.path).to.equal('/v1/messages');
    expect(ctx.server.lastRequest.headers['anthropic-beta']).to.equal('interleaved-thinking-2025-05-14');
  });

  it('sends a redacted thinking block back as redacted_thinking (the Python original sent an empty thinking block)', async () => {
    const body = await send(provider(), history(user('What is 2+2?'), createMessage('assistant', [redactedThinkPart('enc_redacted_xyz'), textPart('4.')])));
    expect((body['messages'] as Body[])[1]).to.deep.equal({
      role: 'assistant',
      content: [
        { type: 'redacted_thinking', data: 'enc_redacted_xyz' },
        { type: 'text', text: '4.', cache_control: { type: 'ephemeral' } },
      ],
    });
  });

  it('sends a think part with an empty text and a signature as a thinking block (a history of the Python original)', async () => {
    const body = await send(provider(), history(user('What is 2+2?'), createMessage('assistant', [thinkPart('', 'enc_redacted_sig_xyz'), textPart('4.')])));
    expect((body['messages'] as Body[])[1]!['content']).to.deep.equal([
      { type: 'thinking', thinking: '', signature: 'enc_redacted_sig_xyz' },
      { type: 'text', text: '4.', cache_control: { type: 'ephemeral' } },
    ]);
  });

  it('merges parallel tool results into one user message (roles user, assistant, user)', async () => {
    const body = await send(provider(), CASES['parallel_tool_calls']!);
    const messages = body['messages'] as { role: string; content: Body[] }[];
    expect(messages.map((m) => m.role)).to.deep.equal(['user', 'assistant', 'user']);
    expect(messages[2]!.content.map((block) => block['tool_use_id'])).to.deep.equal(['call_add', 'call_mul']);
  });

  it('sends a system message mid-history as <system>…</system> user text, not merged with its neighbours', async () => {
    const body = await send(provider(), history(user('a'), createMessage('system', [textPart('Be'), textPart('brief.')]), user('b')));
    expect(body['messages']).to.deep.equal([
      { role: 'user', content: [{ type: 'text', text: 'a' }] },
      { role: 'user', content: [{ type: 'text', text: '<system>Be\nbrief.</system>' }] },
      { role: 'user', content: [{ type: 'text', text: 'b', cache_control: { type: 'ephemeral' } }] },
    ]);
  });

  it('does not merge a tool result into a user message that holds other content', async () => {
    const body = await send(
      provider(),
      history(
        user('go'),
        createMessage('assistant', '', { toolCalls: [toolCall('t1', 'add', '{}')] }),
        createMessage('tool', '1', { toolCallId: 't1' }),
        user('and now?'),
      ),
    );
    expect((body['messages'] as Body[]).map((m) => (m['content'] as Body[]).map((b) => b['type']))).to.deep.equal([['text'], ['tool_use'], ['tool_result'], ['text']]);
  });

  it('leaves out empty and whitespace-only text, and a message left with no block', async () => {
    const body = await send(
      provider(),
      history(user('go'), createMessage('assistant', [textPart(''), textPart('  \n')], { toolCalls: [toolCall('t1', 'add', null)] }), createMessage('assistant', [thinkPart('unsigned')]), createMessage('tool', [textPart('ok')], { toolCallId: 't1' })),
    );
    expect(body['messages']).to.deep.equal([
      { role: 'user', content: [{ type: 'text', text: 'go' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'add', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'ok' }], cache_control: { type: 'ephemeral' } }] },
    ]);
  });

  it('sends tool results as one string with `toolResultContent: text`', async () => {
    const body = await send(provider({ toolResultContent: 'text' }), CASES['parallel_tool_calls']!);
    const last = (body['messages'] as { content: Body[] }[])[2]!.content;
    expect(last.map((block) => block['content'])).to.deep.equal([
      '<system-reminder>This is a system reminder</system-reminder>\n5',
      '<system-reminder>This is a system reminder</system-reminder>\n20',
    ]);
  });

  it('sends huge tool arguments whole', async () => {
    const big = 'x'.repeat(2_000_000);
    const body = await send(provider(), history(user('go'), createMessage('assistant', '', { toolCalls: [toolCall('t1', 'add', JSON.stringify({ big }))] }), createMessage('tool', 'ok', { toolCallId: 't1' })));
    const use = (body['messages'] as { content: Body[] }[])[1]!.content[0]!;
    expect((use['input'] as { big: string }).big).to.have.length(2_000_000);
  });

  it('tolerates raw control characters inside tool-argument strings (as models emit them)', async () => {
    const body = await send(provider(), history(user('go'), createMessage('assistant', '', { toolCalls: [toolCall('t1', 'add', '{"text": "a\nb"}')] }), createMessage('tool', 'ok', { toolCallId: 't1' })));
    expect((body['messages'] as { content: Body[] }[])[1]!.content[0]!['input']).to.deep.equal({ text: 'a\nb' });
  });

  describe('prompt caching', () => {
    it('puts the three breakpoints on the system prompt, the last tool and the last block, with a 1h TTL when asked', async () => {
      const body = await send(provider({ promptCache: { ttl: '1h' } }), { ...CASES['parallel_tool_calls']!, system: 'Be exact.' });
      const hour = { type: 'ephemeral', ttl: '1h' };
      expect(body['system']).to.deep.equal([{ type: 'text', text: 'Be exact.', cache_control: hour }]);
      expect((body['tools'] as Body[]).map((tool) => tool['cache_control'])).to.deep.equal([undefined, hour]);
      expect(JSON.stringify(body).split('"cache_control"').length - 1).to.equal(3);
      expect((body['messages'] as { content: Body[] }[]).at(-1)!.content.at(-1)!['cache_control']).to.deep.equal(hour);
    });

    it('sends no breakpoint at all with `promptCache: false`', async () => {
      const body = await send(provider({ promptCache: false }), { ...CASES['parallel_tool_calls']!, system: 'Be exact.' });
      expect(JSON.stringify(body)).to.not.include('cache_control');
    });

    it('puts no breakpoint on a last block that is thinking', async () => {
      const body = await send(provider(), history(user('go'), createMessage('assistant', [textPart('ok'), thinkPart('hmm', 'sig')])));
      expect(JSON.stringify(body)).to.not.include('cache_control');
    });

    it('rejects an unknown TTL when the provider is built', () => {
      expect(() => provider({ promptCache: { ttl: '2h' as '1h' } })).to.throw(ChatProviderError, /'5m' or '1h'/);
    });
  });

  describe('thinking (kosong spec §7.5)', () => {
    // the SDK warns on the console about deprecated models (claude-opus-4-5 here); keep the output clean
    let warn: sinon.SinonStub;
    beforeEach(() => {
      warn = sinon.stub(console, 'warn');
    });
    afterEach(() => warn.restore());

    const cases: readonly [model: string, effort: ThinkingEffort, thinking: unknown, outputConfig: unknown, interleaved: boolean][] = [
      ['claude-sonnet-4-20250514', 'high', { type: 'enabled', budget_tokens: 32_000 }, undefined, true],
      ['claude-opus-4-6-20260205', 'high', { type: 'adaptive', display: 'summarized' }, { effort: 'high' }, false],
      ['claude-opus-4-6', 'off', { type: 'disabled' }, undefined, false],
      ['claude-opus-4-7', 'high', { type: 'adaptive', display: 'summarized' }, { effort: 'high' }, false],
      ['claude-opus-4-7', 'low', { type: 'adaptive', display: 'summarized' }, { effort: 'low' }, false],
      ['claude-opus-4-7', 'medium', { type: 'adaptive', display: 'summarized' }, { effort: 'medium' }, false],
      ['claude-opus-4-7', 'xhigh', { type: 'adaptive', display: 'summarized' }, { effort: 'xhigh' }, false],
      ['claude-opus-4-7', 'max', { type: 'adaptive', display: 'summarized' }, { effort: 'max' }, false],
      ['claude-opus-4-8', 'high', { type: 'adaptive', display: 'summarized' }, { effort: 'high' }, false],
      ['claude-sonnet-4-20250514', 'low', { type: 'enabled', budget_tokens: 1024 }, undefined, true],
      ['claude-3-5-sonnet-20240620', 'high', { type: 'enabled', budget_tokens: 32_000 }, undefined, true],
      ['claude-haiku-4-5-20251001', 'medium', { type: 'enabled', budget_tokens: 4096 }, undefined, true],
      ['claude-opus-4-5', 'xhigh', { type: 'enabled', budget_tokens: 32_000 }, { effort: 'high' }, true],
      ['claude-opus-4-6', 'max', { type: 'adaptive', display: 'summarized' }, { effort: 'max' }, false],
      ['claude-opus-4-6', 'xhigh', { type: 'adaptive', display: 'summarized' }, { effort: 'high' }, false],
    ];
    for (const [model, effort, thinking, outputConfig, interleaved] of cases) {
      it(`${model} + ${effort}`, async () => {
        const body = await send(provider({ model }).withThinking(effort), history(user('hi')));
        expect(body['thinking']).to.deep.equal(thinking);
        if (outputConfig === undefined) expect(body).to.not.have.property('output_config');
        else expect(body['output_config']).to.deep.equal(outputConfig);
        const beta = String(ctx.server.lastRequest.headers['anthropic-beta'] ?? '');
        expect(beta.includes('interleaved-thinking-2025-05-14'), beta).to.equal(interleaved);
      });
    }

    it('the SDK still warns about a deprecated model', async () => {
      await send(provider({ model: 'claude-opus-4-5' }), history(user('hi')));
      expect(String(warn.firstCall?.args[0])).to.match(/claude-opus-4-5' is deprecated/);
    });

    it('switching an adaptive model from high to off disables thinking and drops output_config', async () => {
      const body = await send(provider({ model: 'claude-opus-4-7' }).withThinking('high').withThinking('off'), history(user('hi')));
      expect(body['thinking']).to.deep.equal({ type: 'disabled' });
      expect(body).to.not.have.property('output_config');
    });

    it('sends no thinking field until withThinking is called, and withThinking leaves the original alone', async () => {
      const plain = provider();
      plain.withThinking('high');
      const body = await send(plain, history(user('hi')));
      expect(body).to.not.have.property('thinking');
      expect(plain.thinkingEffort).to.equal(undefined);
    });

    it('reports the effort the model gets', () => {
      for (const effort of ['low', 'medium', 'high', 'off'] as const) expect(provider({ model: 'claude-opus-4-6' }).withThinking(effort).thinkingEffort).to.equal(effort);
      for (const effort of ['low', 'medium', 'high', 'xhigh', 'max', 'off'] as const) expect(provider({ model: 'claude-opus-4-7' }).withThinking(effort).thinkingEffort).to.equal(effort);
      expect(provider({ model: 'claude-opus-4-6' }).withThinking('xhigh').thinkingEffort).to.equal('high');
    });
  });

  it('forwards metadata, and sends none without it', async () => {
    expect((await send(provider({ metadata: { user_id: 'test-session-id' } }), history(user('hi'))))['metadata']).to.deep.equal({ user_id: 'test-session-id' });
    expect(await send(provider(), history(user('hi')))).to.not.have.property('metadata');
  });

  it('adds extra beta flags to anthropic-beta, each once', async () => {
    await send(provider({ betas: ['context-1m-2025-08-07', 'interleaved-thinking-2025-05-14'] }), history(user('hi')));
    expect(ctx.server.lastRequest.headers['anthropic-beta']).to.equal('interleaved-thinking-2025-05-14,context-1m-2025-08-07');
    await send(provider({ model: 'claude-opus-4-7' }), history(user('hi')));
    expect(ctx.server.lastRequest.headers).to.not.have.property('anthropic-beta');
  });

  describe('what the API cannot take is a clear error, before any request', () => {
    const bad: readonly [string, Message[], RegExp][] = [
      ['arguments that are a JSON array', [user('go'), createMessage('assistant', '', { toolCalls: [toolCall('t1', 'add', '[1, 2]')] })], /"t1" \(add\).*must be a JSON object, got an array/],
      ['arguments that are a JSON number', [user('go'), createMessage('assistant', '', { toolCalls: [toolCall('t1', 'add', '42')] })], /must be a JSON object, got a number/],
      ['arguments that are JSON null', [user('go'), createMessage('assistant', '', { toolCalls: [toolCall('t1', 'add', 'null')] })], /must be a JSON object, got null/],
      ['arguments that are not JSON', [user('go'), createMessage('assistant', '', { toolCalls: [toolCall('t1', 'add', '{"a": ')] })], /"t1" \(add\) of message 1 \(assistant\).*not valid JSON/],
      ['a tool message without toolCallId', [user('go'), createMessage('tool', 'x')], /message 1 \(tool\).*toolCallId/],
      ['a think part in a tool result', [user('go'), createMessage('tool', [thinkPart('x')], { toolCallId: 't1' })], /only text and images, not "think"/],
      ['audio', [createMessage('user', [audioURLPart('data:audio/wav;base64,AAAA')])], /message 0 \(user\).*no audio/],
      ['a data: URI that is not base64', [createMessage('user', [imageURLPart('data:image/png,abc')])], /must be base64/],
      ['an image type the API lacks', [createMessage('user', [imageURLPart('data:image/bmp;base64,AAAA')])], /unsupported media type "image\/bmp"/],
    ];
    for (const [what, messages, pattern] of bad) {
      it(what, async () => {
        const error = await rejection(provider().generate('', [ADD_TOOL, MUL_TOOL], messages));
        expect(ChatProviderError.isInstance(error)).to.equal(true);
        expect((error as Error).message).to.match(pattern);
        expect(ctx.server.requests).to.have.length(0);
      });
    }
  });
});
