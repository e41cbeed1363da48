import {
  APIStatusError,
  ChatProviderError,
  isRetryableError,
  textPart,
  thinkPart,
  tokenUsage,
  toolCall,
  toolCallPart,
  type StreamedMessagePart,
} from '@kosong/core';
import { mergePart } from '@kosong/core/provider-kit';
import { expect } from 'chai';

import { ResponsesEventConverter } from '../responses-event-converter.js';
import { errorEvent, responseEvents, responseFailedEvent, responseObject } from '../testing/index.js';

/** Feeds the events, then ends: the parts, and what it threw, if it did. */
function convert(events: readonly unknown[], converter = new ResponsesEventConverter({ generateId: () => 'generated' })): {
  parts: StreamedMessagePart[];
  error: unknown;
  converter: ResponsesEventConverter;
} {
  const parts: StreamedMessagePart[] = [];
  try {
    for (const event of events) converter.push(event, parts);
    converter.end(parts);
    return { parts, error: undefined, converter };
  } catch (error) {
    return { parts, error, converter };
  }
}

/** The parts merged as kosong merges a stream (adjacent text, think until a signature, a call and its fragments). */
function merged(parts: readonly StreamedMessagePart[]): StreamedMessagePart[] {
  const out: StreamedMessagePart[] = [];
  for (const part of parts) {
    const joined = out.length === 0 ? undefined : mergePart(out.at(-1)!, part);
    if (joined === undefined) out.push(part);
    else out[out.length - 1] = joined;
  }
  return out;
}

const argsDelta = (output_index: number, delta: string, item_id = `fc_${output_index}`): object => ({ type: 'response.function_call_arguments.delta', output_index, item_id, delta });
const callAdded = (output_index: number, call_id: string, name: string): object => ({
  type: 'response.output_item.added',
  output_index,
  item: { id: `fc_${output_index}`, type: 'function_call', call_id, name, arguments: '', status: 'in_progress' },
});
const callDone = (output_index: number, call_id: string, name: string, args: string): object => ({
  type: 'response.output_item.done',
  output_index,
  item: { id: `fc_${output_index}`, type: 'function_call', call_id, name, arguments: args, status: 'completed' },
});
const completed = (extra: Record<string, unknown> = {}): object => ({ type: 'response.completed', response: { ...responseObject({ status: 'completed' }), ...extra } });

describe('ResponsesEventConverter: Responses stream events to kosong parts (kosong spec §7.4)', () => {
  it('text deltas → text parts; the id is the response id (not an item id); usage and finish reason stop', () => {
    const { parts, error, converter } = convert(responseEvents([{ type: 'message', text: ['Hel', 'lo'], id: 'msg_last' }], { id: 'resp_42', usage: { input_tokens: 12, output_tokens: 3 } }));
    expect(error).to.equal(undefined);
    expect(parts).to.deep.equal([textPart('Hel'), textPart('lo')]);
    expect(converter.id).to.equal('resp_42');
    expect(converter.usage).to.deep.equal(tokenUsage({ inputOther: 12, output: 3 }));
    expect(converter.finishReason).to.equal('stop');
  });

  it('usage: cached input tokens are cache reads, cache writes are cache creation, both out of inputOther', () => {
    const usage = { input_tokens: 1000, output_tokens: 50, input_tokens_details: { cached_tokens: 600, cache_write_tokens: 300 }, output_tokens_details: { reasoning_tokens: 20 } };
    const { converter } = convert(responseEvents([{ type: 'message', text: ['x'] }], { usage }));
    expect(converter.usage).to.deep.equal(tokenUsage({ inputOther: 100, output: 50, inputCacheRead: 600, inputCacheCreation: 300 }));
  });

  it('reasoning: summary parts and deltas as think parts, then the encrypted content, closing the item: one think part per item', () => {
    const events = responseEvents([
      { type: 'reasoning', summary: [['Plan ', 'A.'], ['Then B.']], encrypted: 'enc_1' },
      { type: 'reasoning', summary: [], encrypted: 'enc_2' },
      { type: 'message', text: ['Done.'] },
    ]);
    const { parts, error } = convert(events);
    expect(error).to.equal(undefined);
    expect(parts).to.deep.equal([
      thinkPart(''),
      thinkPart('Plan '),
      thinkPart('A.'),
      thinkPart('\n\n'),
      thinkPart('Then B.'),
      thinkPart('', 'enc_1'),
      thinkPart('', 'enc_2'),
      textPart('Done.'),
    ]);
    expect(merged(parts)).to.deep.equal([thinkPart('Plan A.\n\nThen B.', 'enc_1'), thinkPart('', 'enc_2'), textPart('Done.')]);
  });

  it('function calls: the call with its call_id and name, then its argument fragments; finish reason tool_calls', () => {
    const events = responseEvents([
      { type: 'message', text: ['Calling.'] },
      { type: 'function_call', callId: 'call_a', name: 'add', arguments: ['{"a":', '2}'] },
      { type: 'function_call', callId: 'call_b', name: 'mul', arguments: ['{}'] },
    ]);
    const { parts, converter } = convert(events);
    expect(parts).to.deep.equal([textPart('Calling.'), toolCall('call_a', 'add', null), toolCallPart('{"a":'), toolCallPart('2}'), toolCall('call_b', 'mul', null), toolCallPart('{}')]);
    expect(converter.finishReason).to.equal('tool_calls');
  });

  it('interleaved argument deltas of two calls are never mixed: the second waits until the first is done', () => {
    const events = [
      callAdded(0, 'call_a', 'add'),
      callAdded(1, 'call_b', 'mul'),
      argsDelta(1, '{"x":'),
      argsDelta(0, '{"a":'),
      argsDelta(1, '1}'),
      argsDelta(0, '2}'),
      callDone(1, 'call_b', 'mul', '{"x":1}'),
      callDone(0, 'call_a', 'add', '{"a":2}'),
      completed(),
    ];
    const { parts, error } = convert(events);
    expect(error).to.equal(undefined);
    expect(merged(parts)).to.deep.equal([toolCall('call_a', 'add', '{"a":2}'), toolCall('call_b', 'mul', '{"x":1}')]);
    // and the first call streamed as it came
    expect(parts.slice(0, 3)).to.deep.equal([toolCall('call_a', 'add', null), toolCallPart('{"a":'), toolCallPart('2}')]);
  });

  it('deltas keyed by item_id alone (no output_index) go to their own item', () => {
    const events = [
      callAdded(0, 'call_a', 'add'),
      callAdded(1, 'call_b', 'mul'),
      { type: 'response.function_call_arguments.delta', item_id: 'fc_1', delta: '{"x":1}' },
      { type: 'response.function_call_arguments.delta', item_id: 'fc_0', delta: '{"a":2}' },
      completed(),
    ];
    const { parts } = convert(events);
    expect(merged(parts)).to.deep.equal([toolCall('call_a', 'add', '{"a":2}'), toolCall('call_b', 'mul', '{"x":1}')]);
  });

  it('a call whose arguments came only with output_item.done (no deltas) gets them; a call without call_id gets an id', () => {
    const events = [
      { type: 'response.output_item.added', output_index: 0, item: { id: 'fc_0', type: 'function_call', name: 'add', arguments: '' } },
      { type: 'response.output_item.done', output_index: 0, item: { id: 'fc_0', type: 'function_call', name: 'add', arguments: '{"a":1}' } },
      completed(),
    ];
    expect(merged(convert(events).parts)).to.deep.equal([toolCall('generated', 'add', '{"a":1}')]);
  });

  it('the arguments of output_item.done do not repeat what the deltas sent', () => {
    const events = [callAdded(0, 'call_a', 'add'), argsDelta(0, '{"a":1}'), callDone(0, 'call_a', 'add', '{"a":1}'), completed()];
    expect(merged(convert(events).parts)).to.deep.equal([toolCall('call_a', 'add', '{"a":1}')]);
  });

  it('items that came only with their done event, or only in the final response, still give their parts', () => {
    const doneOnly = [
      { type: 'response.output_item.done', output_index: 0, item: { id: 'rs_0', type: 'reasoning', summary: [{ type: 'summary_text', text: 'Think.' }], encrypted_content: 'enc' } },
      { type: 'response.output_item.done', output_index: 1, item: { id: 'msg_1', type: 'message', content: [{ type: 'output_text', text: 'Hi.' }] } },
      { type: 'response.output_item.done', output_index: 2, item: { id: 'fc_2', type: 'function_call', call_id: 'c', name: 'f', arguments: '{}' } },
      completed(),
    ];
    const expected = [thinkPart('Think.', 'enc'), textPart('Hi.'), toolCall('c', 'f', '{}')];
    expect(merged(convert(doneOnly).parts)).to.deep.equal(expected);
    const finalOnly = [
      completed({
        output: [
          { id: 'rs_0', type: 'reasoning', summary: [{ type: 'summary_text', text: 'Think.' }], encrypted_content: 'enc' },
          { id: 'msg_1', type: 'message', content: [{ type: 'output_text', text: 'Hi.' }] },
          { id: 'fc_2', type: 'function_call', call_id: 'c', name: 'f', arguments: '{}' },
        ],
      }),
    ];
    const { parts, converter } = convert(finalOnly);
    expect(merged(parts)).to.deep.equal(expected);
    expect(converter.finishReason).to.equal('tool_calls');
  });

  it('a refusal streams as text', () => {
    const events = [{ type: 'response.refusal.delta', output_index: 0, item_id: 'msg_0', delta: 'I cannot.' }, completed()];
    expect(convert(events).parts).to.deep.equal([textPart('I cannot.')]);
  });

  it('incomplete: max_output_tokens → length, content_filter → content_filter, anything else → other; usage kept', () => {
    for (const [reason, expected] of [['max_output_tokens', 'length'], ['content_filter', 'content_filter'], [undefined, 'other']] as const) {
      const events = responseEvents([{ type: 'message', text: ['cut'] }], { status: 'incomplete', ...(reason === undefined ? {} : { incompleteReason: reason }), usage: { input_tokens: 5, output_tokens: 9 } });
      const { converter, parts } = convert(events);
      expect(converter.finishReason, String(reason)).to.equal(expected);
      expect(converter.usage).to.deep.equal(tokenUsage({ inputOther: 5, output: 9 }));
      expect(parts).to.deep.equal([textPart('cut')]);
    }
  });

  it('response.failed: an APIStatusError 500 for server_error and 429 for rate_limit_exceeded (retryable), after the parts before it', () => {
    for (const [code, status] of [['server_error', 500], ['rate_limit_exceeded', 429]] as const) {
      const events = [...responseEvents([{ type: 'message', text: ['partial'] }]).slice(0, 5), responseFailedEvent(code, 'the model broke')];
      const { parts, error } = convert(events);
      expect(parts).to.deep.equal([textPart('partial')]);
      expect(APIStatusError.isInstance(error), String(error)).to.equal(true);
      expect(error).to.include({ statusCode: status });
      expect(isRetryableError(error)).to.equal(true);
      expect((error as Error).message).to.equal(`The Responses stream sent response.failed (${code}): the model broke`);
    }
  });

  it('response.failed with another code, or none: a ChatProviderError that is not retried', () => {
    for (const event of [responseFailedEvent('invalid_prompt', 'bad prompt'), { type: 'response.failed', response: { id: 'r', status: 'failed', error: null } }]) {
      const { error } = convert([event]);
      expect(ChatProviderError.isInstance(error) && !APIStatusError.isInstance(error), String(error)).to.equal(true);
      expect(isRetryableError(error)).to.equal(false);
    }
    expect((convert([responseFailedEvent('invalid_prompt', 'bad prompt')]).error as Error).message).to.include('(invalid_prompt): bad prompt');
  });

  it('an error event: by its code (rate limit → 429), else a ChatProviderError; a "constructor" code is no status', () => {
    expect(convert([errorEvent('rate_limit_exceeded', 'slow down')]).error).to.include({ statusCode: 429 });
    const plain = convert([errorEvent(null, 'boom')]).error;
    expect(ChatProviderError.isInstance(plain) && !APIStatusError.isInstance(plain)).to.equal(true);
    expect((plain as Error).message).to.equal('The Responses stream sent error: boom');
    const odd = convert([errorEvent('constructor', 'x')]).error;
    expect(APIStatusError.isInstance(odd)).to.equal(false);
  });

  it('ignores unknown event types and events after the end; refuses an event that is not an object', () => {
    const events = [
      { type: 'response.some_future_event', output_index: 0, whatever: true },
      { type: 'response.output_text.annotation.added', output_index: 0, annotation: {} },
      { no: 'type' },
      ...responseEvents([{ type: 'message', text: ['ok'] }]),
      { type: 'response.output_text.delta', output_index: 0, item_id: 'msg_0', delta: 'late' },
      errorEvent('server_error', 'after the end'),
    ];
    const { parts, error } = convert(events);
    expect(error).to.equal(undefined);
    expect(parts).to.deep.equal([textPart('ok')]);
    for (const bad of [[1, 2], 'text', null, 42]) {
      const caught = convert([bad]).error;
      expect(ChatProviderError.isInstance(caught), JSON.stringify(bad)).to.equal(true);
      expect((caught as Error).message).to.match(/not a JSON object/);
    }
  });

  it('refuses a function call without a name, and output for an item that was done', () => {
    const nameless = convert([{ type: 'response.output_item.added', output_index: 0, item: { type: 'function_call', call_id: 'c', arguments: '' } }]).error;
    expect((nameless as Error).message).to.match(/function call "c" without a name/);
    const late = convert([callAdded(0, 'c', 'f'), callDone(0, 'c', 'f', '{}'), argsDelta(0, 'more')]).error;
    expect(ChatProviderError.isInstance(late)).to.equal(true);
    expect((late as Error).message).to.match(/more output for item #0 after it was done/);
  });

  it('without a final event there is no finish reason (the stream reads that as a cut connection); held parts still come out at the end', () => {
    const { parts, converter } = convert([callAdded(0, 'a', 'f'), callAdded(1, 'b', 'g'), argsDelta(1, '{}'), argsDelta(0, '{}')]);
    expect(converter.finishReason).to.equal(undefined);
    expect(merged(parts)).to.deep.equal([toolCall('a', 'f', '{}'), toolCall('b', 'g', '{}')]);
  });

  it('huge arguments: 5 MB in 100,000 deltas arrive whole', () => {
    const chunk = 'x'.repeat(50);
    const events: object[] = [callAdded(0, 'big', 'f')];
    for (let i = 0; i < 100_000; i++) events.push(argsDelta(0, chunk));
    events.push(completed());
    const { parts, error } = convert(events);
    expect(error).to.equal(undefined);
    const call = merged(parts)[0] as ReturnType<typeof toolCall>;
    expect(call.function.arguments!.length).to.equal(5_000_000);
  });
});
