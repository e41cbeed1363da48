import {
  APIEmptyResponseError,
  APITimeoutError,
  ChatProviderError,
  generate,
  imageURLPart,
  textPart,
  thinkPart,
  toolCall,
  toolCallPart,
  type HookErrorReport,
  type Message,
  type StreamedMessagePart,
  type ToolCall,
} from '@kosong/core';
import { MockChatProvider } from '@kosong/provider-echo';
import { expect } from 'chai';
import { deepFreeze } from './support.js';

const history: readonly Message[] = [{ role: 'user', content: [textPart('hi')] }];
const run = (parts: readonly StreamedMessagePart[], extra: Partial<Parameters<typeof generate>[0]> = {}) =>
  generate({ provider: new MockChatProvider(parts), systemPrompt: '', history, ...extra });

describe('generate()', () => {
  it('merges a stream exactly as kosong test_generate', async () => {
    const parts = deepFreeze([
      textPart('Hello, '),
      textPart('world'),
      textPart('!'),
      imageURLPart('https://example.com/image.png'),
      textPart('Another text.'),
      textPart(''),
      toolCall('get_weather#123', 'get_weather', null),
      toolCallPart('{'),
      toolCallPart('"city":'),
      toolCallPart('"Beijing"'),
      toolCallPart('}'),
      toolCallPart(null),
    ]);
    const result = await run(parts);
    expect(result.message).to.deep.equal({
      role: 'assistant',
      content: [textPart('Hello, world!'), imageURLPart('https://example.com/image.png'), textPart('Another text.')],
      toolCalls: [toolCall('get_weather#123', 'get_weather', '{"city":"Beijing"}')],
    });
  });

  it('reports raw parts and complete tool calls in the order of kosong test_generate_with_callbacks', async () => {
    const parts = [
      textPart('Hi'),
      toolCall('a', 'get_weather', null),
      toolCallPart('{"city":'),
      toolCallPart('"Paris"}'),
      toolCall('b', 'get_time', ''),
    ];
    const log: string[] = [];
    const seenParts: StreamedMessagePart[] = [];
    const seenCalls: ToolCall[] = [];
    const result = await run(parts, {
      onMessagePart: (part) => {
        seenParts.push(part);
        log.push(`part:${part.type}`);
      },
      onToolCall: (call) => {
        seenCalls.push(call);
        log.push(`call:${call.id}`);
      },
    });
    expect(seenParts).to.deep.equal(parts);
    expect(seenCalls).to.deep.equal(result.message.toolCalls);
    expect(seenCalls[0]!.function.arguments).to.equal('{"city":"Paris"}');
    expect(log).to.deep.equal([
      'part:text',
      'part:function',
      'part:tool_call_part',
      'part:tool_call_part',
      'part:function',
      'call:a',
      'call:b',
    ]);
  });

  it('onPart is the name of the part callback (as for step); onMessagePart still works; both at once is a TypeError before the provider is asked', async () => {
    const parts = [textPart('Hi'), textPart(' there')];
    const seen: string[] = [];
    await run(parts, { onPart: (part) => void seen.push(`new:${part.type}`) });
    await run(parts, { onMessagePart: (part) => void seen.push(`old:${part.type}`) });
    expect(seen).to.deep.equal(['new:text', 'new:text', 'old:text', 'old:text']);
    const provider = new MockChatProvider(parts);
    const both = await generate({ provider, systemPrompt: '', history, onPart: () => undefined, onMessagePart: () => undefined }).catch((e: unknown) => e);
    expect(both).to.be.instanceOf(TypeError);
    expect((both as Error).message).to.match(/both onPart and onMessagePart/);
    expect(provider.requests).to.have.length(0);
  });

  it('hands onToolCall a frozen call: the callback cannot change the message\'s call', async () => {
    const reports: HookErrorReport[] = [];
    const result = await run([toolCall('a', 'get_weather', null), toolCallPart('{"city":'), toolCallPart('"Paris"}')], {
      onToolCall: (call) => {
        (call.function as { arguments: string | null }).arguments = '{"city":"Atlantis"}';
      },
      onHookError: (report) => void reports.push(report),
    });
    expect(result.message.toolCalls![0]!.function.arguments).to.equal('{"city":"Paris"}');
    expect(reports.map((r) => [r.hook, r.kind, r.error instanceof TypeError])).to.deep.equal([['onToolCall', 'threw', true]]);
  });

  it('drops an orphan tool-call part', async () => {
    const result = await run([textPart('x'), toolCallPart('{"lost":'), toolCallPart('1}'), textPart('y')]);
    expect(result.message).to.deep.equal({ role: 'assistant', content: [textPart('x'), textPart('y')] });
  });

  it('keeps think parts apart once a signature closed one', async () => {
    const result = await run([thinkPart('a'), thinkPart('b', 'sig-1'), thinkPart('c'), textPart('done')]);
    expect(result.message.content).to.deep.equal([thinkPart('ab', 'sig-1'), thinkPart('c'), textPart('done')]);
  });

  describe('empty responses', () => {
    const cases: [string, StreamedMessagePart[], RegExp][] = [
      ['nothing at all', [], /empty response/],
      ['an orphan tool-call part alone', [toolCallPart('{}')], /empty response/],
      ['only thinking', [thinkPart('hmm')], /only thinking content/],
      ['thinking and whitespace text', [thinkPart('hmm'), textPart('  \n  ')], /only thinking content/],
      ['thinking and an image', [thinkPart('hmm'), imageURLPart('https://x/y.png')], /only thinking content/],
    ];
    for (const [name, parts, message] of cases) {
      it(`raises APIEmptyResponseError for ${name}`, async () => {
        const caught = await run(parts).catch((e: unknown) => e);
        expect(APIEmptyResponseError.isInstance(caught), String(caught)).to.equal(true);
        expect(ChatProviderError.isInstance(caught)).to.equal(true);
        expect((caught as Error).message).to.match(message);
      });
    }

    it('accepts thinking with text, thinking with a tool call, and a single empty text', async () => {
      expect((await run([thinkPart('t'), textPart('answer')])).message.content).to.have.length(2);
      expect((await run([thinkPart('t'), toolCall('c', 'f', '{}')])).message.toolCalls).to.have.length(1);
      expect((await run([textPart('')])).message.content).to.deep.equal([textPart('')]);
    });
  });

  it('passes provider errors through unchanged, before and during the stream', async () => {
    const before = new APITimeoutError('slow');
    expect(await generate({ provider: new MockChatProvider([], { generateError: before }), systemPrompt: '', history }).catch((e: unknown) => e)).to.equal(before);
    const during = new APITimeoutError('stream timed out');
    const provider = new MockChatProvider([textPart('a'), textPart('b')], { errorAfter: { parts: 1, error: during } });
    expect(await generate({ provider, systemPrompt: '', history }).catch((e: unknown) => e)).to.equal(during);
  });

  it('passes system prompt, tools and history to the provider', async () => {
    const provider = new MockChatProvider([textPart('ok')]);
    const tools = [{ name: 'f', description: 'd', parameters: { type: 'object' } }];
    await generate({ provider, systemPrompt: 'sys', tools, history });
    expect(provider.lastRequest).to.deep.equal({ systemPrompt: 'sys', tools, history, generation: {} });
  });

  it('rejects with the abort reason and stops reporting parts', async () => {
    const controller = new AbortController();
    const seen: StreamedMessagePart[] = [];
    const parts = Array.from({ length: 100 }, (_, i) => textPart(String(i)));
    const pending = generate({
      provider: new MockChatProvider(parts, { delayMs: 1 }),
      systemPrompt: '',
      history,
      signal: controller.signal,
      onMessagePart: (part) => {
        seen.push(part);
        if (seen.length === 3) controller.abort(new Error('enough'));
      },
    });
    expect(await pending.catch((e: unknown) => (e as Error).message)).to.equal('enough');
    expect(seen).to.have.length(3);
  });

  it('guards callbacks: a throw, a rejection and a timeout are reported, the result is unchanged', async () => {
    const reports: HookErrorReport[] = [];
    let n = 0;
    const result = await run([textPart('a'), textPart('b'), textPart('c'), toolCall('x', 'f', '{}')], {
      onMessagePart: () => {
        n++;
        if (n === 1) throw new Error('one');
        if (n === 2) return Promise.reject(new Error('two'));
        if (n === 3) return new Promise<void>(() => undefined);
        return undefined;
      },
      onToolCall: () => Promise.reject(new Error('call')),
      onHookError: (r) => reports.push(r),
      hookTimeoutMs: 20,
    });
    expect(result.message.content).to.deep.equal([textPart('abc')]);
    expect(reports.every((r) => r.provider === 'mock' && r.model === 'mock')).to.equal(true);
    expect(reports.map((r) => [r.hook, r.kind, (r.error as Error).message])).to.deep.equal([
      ['onMessagePart', 'threw', 'one'],
      ['onMessagePart', 'rejected', 'two'],
      ['onMessagePart', 'timeout', 'hook did not settle within 20 ms'],
      ['onToolCall', 'rejected', 'call'],
    ]);
  });

  it('rejects a stream item that is not a part with a ChatProviderError', async () => {
    const caught = await run([textPart('a'), null as unknown as StreamedMessagePart]).catch((e: unknown) => e);
    expect(ChatProviderError.isInstance(caught)).to.equal(true);
    expect((caught as Error).message).to.contain('not an object');
  });
});

describe('generate() of a refusal (finish reason content_filter)', () => {
  it('is an answer however little came — nothing, or thinking only — never an empty response to retry', async () => {
    for (const parts of [[], [thinkPart('I should not.')]]) {
      const provider = new MockChatProvider(parts, { finishReason: 'content_filter' });
      const result = await generate({ provider, systemPrompt: '', history });
      expect(result.finishReason).to.equal('content_filter');
      expect(result.message.content).to.deep.equal(parts);
    }
    // Without the refusal, the same streams are empty responses.
    const error = await generate({ provider: new MockChatProvider([]), systemPrompt: '', history }).catch((e: unknown) => e);
    expect(error).to.satisfy(APIEmptyResponseError.isInstance);
  });
});
