import {
  APIConnectionError,
  APIStatusError,
  ChatProviderError,
  generate,
  isRetryableError,
  textPart,
  thinkPart,
  toolCall,
  toolCallPart,
  type ToolCall,
} from '@kosong/core';
import { expect } from 'chai';

import { REDACTED_THINKING_PREFIX } from '../index.js';
import {
  blockDelta,
  blockEvents,
  blockStart,
  blockStop,
  errorEvent,
  messageDelta,
  messageReply,
  messageStart,
  messageStop,
  ping,
  textReply,
} from '../testing/index.js';
import { collect, providerFor, streamFailure, user, useServer } from './support.js';

describe('AnthropicChatProvider streaming (kosong spec §7.5)', () => {
  const ctx = useServer();

  async function stream(): Promise<{ parts: unknown[]; id: string | undefined; usage: unknown; finishReason: unknown; requestId: string | undefined }> {
    const streamed = await providerFor(ctx.server).generate('', [], [user('go')]);
    const parts = await collect(streamed);
    return { parts, id: streamed.id, usage: streamed.usage, finishReason: streamed.finishReason, requestId: streamed.requestId };
  }

  it('streams text deltas as text parts, with id, usage, finish reason and request id', async () => {
    ctx.server.reply(textReply(['Hel', 'lo'], { id: 'msg_1', headers: { 'request-id': 'req_42' }, deltaUsage: { output_tokens: 2 } }));
    expect(await stream()).to.deep.equal({
      parts: [textPart('Hel'), textPart('lo')],
      id: 'msg_1',
      usage: { inputOther: 10, output: 2, inputCacheRead: 0, inputCacheCreation: 0 },
      finishReason: 'stop',
      requestId: 'req_42',
    });
  });

  it('streams thinking, its signature as `encrypted`, and merges into one signed think part', async () => {
    ctx.server.reply(messageReply([{ type: 'thinking', thinking: ['Let me ', 'think.'], signature: 'sig_1' }, { type: 'text', text: ['4.'] }]));
    const { parts } = await stream();
    expect(parts).to.deep.equal([thinkPart('Let me '), thinkPart('think.'), thinkPart('', 'sig_1'), textPart('4.')]);
    ctx.server.reply(messageReply([{ type: 'thinking', thinking: ['a'], signature: 'sig_a' }, { type: 'thinking', thinking: ['b'], signature: 'sig_b' }, { type: 'text', text: ['x'] }]));
    const result = await generate({ provider: providerFor(ctx.server), systemPrompt: '', history: [user('go')] });
    expect(result.message.content).to.deep.equal([thinkPart('a', 'sig_a'), thinkPart('b', 'sig_b'), textPart('x')]);
  });

  it('streams a redacted_thinking block as a think part marked redacted', async () => {
    ctx.server.reply(messageReply([{ type: 'redacted_thinking', data: 'EmwKAhgB' }, { type: 'text', text: ['ok'] }]));
    expect((await stream()).parts).to.deep.equal([thinkPart('', `${REDACTED_THINKING_PREFIX}EmwKAhgB`), textPart('ok')]);
  });

  it('streams tool_use as a tool call with its arguments in fragments; stop reason tool_use is tool_calls', async () => {
    ctx.server.reply(
      messageReply([
        { type: 'text', text: 'Adding.'.split('') },
        { type: 'tool_use', id: 'toolu_1', name: 'add', input: ['', '{"a": 2', ', "b": 3}'] },
        { type: 'tool_use', id: 'toolu_2', name: 'add', input: ['{}'] },
      ]),
    );
    const { parts, finishReason } = await stream();
    expect(parts.filter((p) => (p as { type: string }).type !== 'text')).to.deep.equal([
      toolCall('toolu_1', 'add', null),
      toolCallPart('{"a": 2'),
      toolCallPart(', "b": 3}'),
      toolCall('toolu_2', 'add', null),
      toolCallPart('{}'),
    ]);
    expect(finishReason).to.equal('tool_calls');
  });

  it('takes a tool input sent whole with the start event when no delta follows', async () => {
    ctx.server.reply({
      type: 'stream',
      events: [messageStart(), blockStart(0, { type: 'tool_use', id: 't', name: 'add', input: { a: 1 } }), blockStop(0), messageDelta('tool_use'), messageStop()],
    });
    expect((await stream()).parts).to.deep.equal([toolCall('t', 'add', null), toolCallPart('{"a":1}')]);
  });

  for (const [stopReason, finishReason] of [
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['tool_use', 'tool_calls'],
    ['max_tokens', 'length'],
    ['model_context_window_exceeded', 'length'],
    ['refusal', 'content_filter'],
    ['pause_turn', 'other'],
    ['something_new', 'other'],
  ] as const) {
    it(`maps stop_reason ${stopReason} to ${finishReason}`, async () => {
      ctx.server.reply(textReply(['x'], { stopReason }));
      expect((await stream()).finishReason).to.equal(finishReason);
    });
  }

  it('maps usage with cache reads and writes; message_delta counts replace those of message_start', async () => {
    ctx.server.reply(
      textReply(['x'], {
        startUsage: { input_tokens: 50, output_tokens: 1, cache_read_input_tokens: 1000, cache_creation_input_tokens: 200 },
        deltaUsage: { output_tokens: 77, input_tokens: 55, cache_read_input_tokens: null },
      }),
    );
    expect((await stream()).usage).to.deep.equal({ inputOther: 55, output: 77, inputCacheRead: 1000, inputCacheCreation: 200 });
  });

  it('skips server tool blocks, citations, pings, unknown blocks, unknown deltas and unknown events without breaking the stream', async () => {
    ctx.server.reply({
      type: 'stream',
      events: [
        ping(),
        messageStart(),
        ...blockEvents(0, { type: 'text', text: ['Searching.'] }),
        ...blockEvents(1, { type: 'raw', block: { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: {} }, deltas: [{ type: 'input_json_delta', partial_json: '{"query": "x"}' }] }),
        ...blockEvents(2, { type: 'raw', block: { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [] } }),
        ...blockEvents(3, { type: 'raw', block: { type: 'hologram', shimmer: true }, deltas: [{ type: 'shimmer_delta', shimmer: 1 }] }),
        blockStart(4, { type: 'text', text: '', citations: [] }),
        blockDelta(4, { type: 'citations_delta', citation: { type: 'web_search_result_location', url: 'https://example.com', cited_text: 'x' } }),
        blockDelta(4, { type: 'text_delta', text: ' Found.' }),
        blockDelta(4, { type: 'sparkle_delta', sparkle: true }),
        blockStop(4),
        { event: 'future_event', data: { type: 'future_event', payload: 1 } },
        ping(),
        messageDelta('end_turn'),
        messageStop(),
      ],
    });
    expect((await stream()).parts).to.deep.equal([textPart('Searching.'), textPart(' Found.')]);
  });

  describe('an error event mid-stream is a ChatProviderError of the right class', () => {
    for (const [type, status, retryable] of [
      ['overloaded_error', 529, true],
      ['api_error', 500, true],
      ['rate_limit_error', 429, true],
      ['invalid_request_error', 400, false],
    ] as const) {
      it(`${type} → APIStatusError ${status}${retryable ? ', retryable' : ''}`, async () => {
        ctx.server.reply({ type: 'stream', events: [messageStart(), ...blockEvents(0, { type: 'text', text: ['part'] }), errorEvent(type, 'Overloaded')], headers: { 'request-id': 'req_err' } });
        const { parts, error } = await streamFailure(providerFor(ctx.server));
        expect(parts).to.deep.equal([textPart('part')]);
        expect(APIStatusError.isInstance(error), String(error)).to.equal(true);
        expect(error).to.include({ statusCode: status, requestId: 'req_err' });
        expect((error as Error).message).to.include(type).and.include('Overloaded');
        expect(isRetryableError(error)).to.equal(retryable);
      });
    }

    it('an error type the API does not document → ChatProviderError', async () => {
      ctx.server.reply({ type: 'stream', events: [messageStart(), errorEvent('cosmic_ray_error', 'bit flip')] });
      const { error } = await streamFailure(providerFor(ctx.server));
      expect(ChatProviderError.isInstance(error)).to.equal(true);
      expect(APIStatusError.isInstance(error)).to.equal(false);
      expect((error as Error).message).to.include('cosmic_ray_error');
    });

    it('an error event whose data is not JSON', async () => {
      ctx.server.reply({ type: 'stream', events: [messageStart(), 'event: error\ndata: upstream exploded\n\n'] });
      const { error } = await streamFailure(providerFor(ctx.server));
      expect(ChatProviderError.isInstance(error)).to.equal(true);
      expect((error as Error).message).to.include('upstream exploded');
    });
  });

  describe('under attack', () => {
    it('malformed event data is a ChatProviderError saying so', async () => {
      ctx.server.reply({ type: 'stream', events: [messageStart(), 'event: content_block_start\ndata: {"type": "content_block_start", "index": 0, \n\n'] });
      const { error } = await streamFailure(providerFor(ctx.server));
      expect(ChatProviderError.isInstance(error)).to.equal(true);
      expect((error as Error).message).to.match(/malformed stream data/);
    });

    it('an event that is JSON but no object is a ChatProviderError', async () => {
      ctx.server.reply({ type: 'stream', events: [messageStart(), 'data: [1, 2]\n\n'] });
      const { error } = await streamFailure(providerFor(ctx.server));
      expect((error as Error).message).to.match(/not a JSON object/);
    });

    it('a connection cut mid-event is an APIConnectionError, after the parts that came', async () => {
      ctx.server.reply({ type: 'stream', events: [messageStart(), ...blockEvents(0, { type: 'text', text: ['so far'] }).slice(0, 2), 'event: content_block_delta\ndata: {"type": "content_bl'], then: 'destroy' });
      const { parts, error } = await streamFailure(providerFor(ctx.server));
      expect(parts).to.deep.equal([textPart('so far')]);
      expect(APIConnectionError.isInstance(error), String(error)).to.equal(true);
    });

    it('a body that ends cleanly mid-event, or without message_stop, is an APIConnectionError', async () => {
      ctx.server.reply({ type: 'stream', events: [messageStart(), 'event: content_block_start\ndata: {"type": "content_bl'] });
      expect(APIConnectionError.isInstance((await streamFailure(providerFor(ctx.server))).error)).to.equal(true);
      ctx.server.reply({ type: 'stream', events: [messageStart(), ...blockEvents(0, { type: 'text', text: ['x'] }), messageDelta('end_turn')] });
      const { error } = await streamFailure(providerFor(ctx.server));
      expect(APIConnectionError.isInstance(error)).to.equal(true);
      expect((error as Error).message).to.include('message_stop');
    });

    it('an HTML page with status 200 is a ChatProviderError quoting it', async () => {
      ctx.server.reply({ type: 'body', body: '<!doctype html><html><body>Welcome to nginx!</body></html>', headers: { 'content-type': 'text/html' } });
      const error = await providerFor(ctx.server).generate('', [], [user('go')]).catch((e: unknown) => e);
      expect(ChatProviderError.isInstance(error)).to.equal(true);
      expect((error as Error).message).to.include('text/html').and.include('Welcome to nginx!');
      expect(await ctx.server.lastRequest.closed).to.be.oneOf(['completed', 'aborted']);
    });

    it('a JSON body with status 200 (a proxy that ignores `stream`) is a ChatProviderError', async () => {
      ctx.server.reply({ type: 'body', body: { id: 'msg_1', type: 'message', content: [{ type: 'text', text: 'Hello' }] } });
      const error = await providerFor(ctx.server).generate('', [], [user('go')]).catch((e: unknown) => e);
      expect(ChatProviderError.isInstance(error)).to.equal(true);
      expect((error as Error).message).to.include('application/json');
    });

    it('a delta for a block that is not open, or a block opened over another, is a ChatProviderError', async () => {
      ctx.server.reply({ type: 'stream', events: [messageStart(), blockDelta(3, { type: 'text_delta', text: 'x' })] });
      expect(String((await streamFailure(providerFor(ctx.server))).error)).to.match(/content block 3, which is not open/);
      ctx.server.reply({ type: 'stream', events: [messageStart(), blockStart(0, { type: 'text', text: '' }), blockStart(1, { type: 'text', text: '' })] });
      expect(String((await streamFailure(providerFor(ctx.server))).error)).to.match(/block 0 was still open/);
    });

    it('a tool_use block without id or name is a ChatProviderError', async () => {
      ctx.server.reply({ type: 'stream', events: [messageStart(), blockStart(0, { type: 'tool_use', name: 'add', input: {} })] });
      expect(String((await streamFailure(providerFor(ctx.server))).error)).to.match(/tool_use block without an id or a name/);
    });

    it('streams a huge tool input (8 MB in 2,000 fragments, one 2 MB fragment) intact', async () => {
      const fragment = `"${'x'.repeat(4_000)}",`;
      const input = ['{"items": [', ...Array.from({ length: 2_000 }, () => fragment), `"${'y'.repeat(2_000_000)}"]}`];
      ctx.server.reply(messageReply([{ type: 'tool_use', id: 'big', name: 'store', input }]));
      const result = await generate({ provider: providerFor(ctx.server), systemPrompt: '', history: [user('go')] });
      const call = result.message.toolCalls![0] as ToolCall;
      const parsed = JSON.parse(call.function.arguments!) as { items: string[] };
      expect(parsed.items).to.have.length(2_001);
      expect(parsed.items.at(-1)).to.have.length(2_000_000);
    });

    it('a line without end longer than the cap is a ChatProviderError, not unbounded memory', async function () {
      this.timeout(20_000);
      ctx.server.reply({ type: 'stream', events: [messageStart(), `data: ${'z'.repeat(65 * 1024 * 1024)}`] });
      const { error } = await streamFailure(providerFor(ctx.server));
      expect((error as Error).message).to.match(/without a line end/);
    });

    it('CRLF line ends and multi-line data are read as the SSE standard says', async () => {
      const events = [messageStart(), ...blockEvents(0, { type: 'text', text: ['a', 'b'] }), messageDelta('end_turn'), messageStop()];
      const wire = events.map((e) => `event: ${e.event}\r\ndata: ${JSON.stringify(e.data).replace(',', ',\r\ndata: ')}\r\n\r\n`);
      ctx.server.reply({ type: 'stream', events: wire });
      expect((await stream()).parts).to.deep.equal([textPart('a'), textPart('b')]);
    });

    it('a stream can be read only once', async () => {
      const streamed = await providerFor(ctx.server).generate('', [], [user('go')]);
      await collect(streamed);
      const second = await (async () => {
        try {
          for await (const part of streamed) void part;
        } catch (error) {
          return error;
        }
        return undefined;
      })();
      expect(ChatProviderError.isInstance(second)).to.equal(true);
    });
  });
});
