import { ChatProviderError, createMessage, textPart, thinkPart, toolCall, type Message } from '@kosong/core';
import { expect } from 'chai';

import { collect, rejection, user, useServer } from './support.js';

const calls = [toolCall('c1', 'read_file', '{"path":"a"}'), toolCall('c2', 'read_file', '{"path":"b"}'), toolCall('c3', 'list', '{}')];
const ask = createMessage('assistant', 'Reading.', { toolCalls: calls });
const result = (id: string, text: string): Message => createMessage('tool', text, { toolCallId: id });

describe('Gemini request contents (kosong spec §7.6)', () => {
  const ctx = useServer();
  const contentsOf = async (history: readonly Message[], model?: string): Promise<{ role: string; parts: Record<string, unknown>[] }[]> => {
    await collect(await ctx.provider(model === undefined ? {} : { model }).generate('', [], history));
    return (ctx.server.lastRequest.body as { contents: { role: string; parts: Record<string, unknown>[] }[] }).contents;
  };
  const refusal = async (history: readonly Message[]): Promise<string> => {
    const error = await rejection(ctx.provider().generate('', [], history));
    expect(ChatProviderError.isInstance(error), String(error)).to.equal(true);
    expect(ctx.server.requests, 'nothing is sent').to.have.length(0);
    return (error as Error).message;
  };

  it('packs the tool results of a turn into one user content, in call order whatever their order', async () => {
    const contents = await contentsOf([user('go'), ask, result('c3', 'three'), result('c1', 'one'), result('c2', 'two'), user('thanks')]);
    expect(contents.map((content) => content.role)).to.deep.equal(['user', 'model', 'user', 'user']);
    expect(contents[2]!.parts).to.deep.equal([
      { functionResponse: { name: 'read_file', response: { output: 'one' } } },
      { functionResponse: { name: 'read_file', response: { output: 'two' } } },
      { functionResponse: { name: 'list', response: { output: 'three' } } },
    ]);
  });

  it('two calls with the same id: their results pair up in order', async () => {
    const twins = createMessage('assistant', [], { toolCalls: [toolCall('dup', 'f', '{"n":1}'), toolCall('dup', 'f', '{"n":2}')] });
    const contents = await contentsOf([user('go'), twins, result('dup', 'first'), result('dup', 'second')]);
    expect(contents[2]!.parts.map((part) => (part['functionResponse'] as { response: unknown }).response)).to.deep.equal([{ output: 'first' }, { output: 'second' }]);
  });

  it('a missing, an unexpected or a duplicate result is a clear error, before any request', async () => {
    expect(await refusal([user('go'), ask, result('c1', 'one'), result('c3', 'three')])).to.equal("Missing tool responses for ids: ['c2']");
    expect(await refusal([user('go'), ask, result('c1', '1'), result('c2', '2'), result('c3', '3'), result('c9', '9')])).to.equal(
      "Unexpected tool responses for ids: ['c9']",
    );
    expect(await refusal([user('go'), ask, result('c1', '1'), result('c1', 'again'), result('c2', '2'), result('c3', '3')])).to.equal(
      'Duplicate tool response for id: c1',
    );
    expect(await refusal([user('go'), ask, createMessage('tool', 'x')])).to.equal('Tool response is missing `tool_call_id`.');
  });

  it('a tool-calling turn with no results yet sends just the calls', async () => {
    const contents = await contentsOf([user('go'), ask]);
    expect(contents).to.have.length(2);
    expect(contents[1]!.parts).to.have.length(4);
  });

  it('a tool result that follows no call: named by its `name`, or by an id kosong made up; else an error', async () => {
    const named = await contentsOf([user('go'), createMessage('tool', 'ok', { toolCallId: 'x', name: 'lookup' })]);
    expect(named[1]).to.deep.equal({ role: 'user', parts: [{ functionResponse: { name: 'lookup', response: { output: 'ok' } } }] });
    const madeUp = await contentsOf([user('go'), result('read_file_3f0c6e1a-9b2d-4c8e-a1f0-5d6e7f8a9b0c', 'ok')]);
    expect((madeUp[1]!.parts[0]!['functionResponse'] as { name: string }).name).to.equal('read_file');
    ctx.server.requests.length = 0;
    expect(await refusal([user('go'), result('fc-17', 'ok')])).to.match(/^Tool response fc-17 follows no tool call, and its function name is unknown/);
  });

  it('think parts are not sent; an assistant message of only thinking is left out', async () => {
    const contents = await contentsOf([
      user('2+2?'),
      createMessage('assistant', [thinkPart('Hmm.', 'sig'), textPart('4')]),
      createMessage('assistant', [thinkPart('more')]),
      user('and 3+3?'),
    ]);
    expect(contents).to.deep.equal([
      { role: 'user', parts: [{ text: '2+2?' }] },
      { role: 'model', parts: [{ text: '4' }] },
      { role: 'user', parts: [{ text: 'and 3+3?' }] },
    ]);
  });

  it('a system message mid-conversation becomes user text in <system> tags', async () => {
    const contents = await contentsOf([user('hi'), createMessage('system', 'Be terse.'), user('go')]);
    expect(contents[1]).to.deep.equal({ role: 'user', parts: [{ text: '<system>Be terse.</system>' }] });
  });

  it('tool call arguments: control characters in strings tolerated; invalid JSON or a non-object refused', async () => {
    const raw = createMessage('assistant', [], { toolCalls: [toolCall('c', 'echo', '{"text": "line1\nline2"}')] });
    const contents = await contentsOf([user('go'), raw, result('c', 'ok')]);
    expect(contents[1]!.parts[0]).to.deep.equal({ functionCall: { name: 'echo', args: { text: 'line1\nline2' } } });
    const empty = createMessage('assistant', [], { toolCalls: [toolCall('c', 'now', null)] });
    expect((await contentsOf([user('go'), empty, result('c', 'noon')]))[1]!.parts[0]).to.deep.equal({ functionCall: { name: 'now', args: {} } });
    ctx.server.requests.length = 0;
    const broken = createMessage('assistant', [], { toolCalls: [toolCall('c', 'echo', '{"text": ')] });
    expect(await refusal([user('go'), broken, result('c', 'ok')])).to.match(/^Tool call arguments must be valid JSON\. \(call c to echo: /);
    const list = createMessage('assistant', [], { toolCalls: [toolCall('c', 'echo', '[1]')] });
    expect(await refusal([user('go'), list, result('c', 'ok')])).to.equal('Tool call arguments must be a JSON object. (call c to echo)');
  });

  it('a thought signature that is not a string is refused', async () => {
    const odd = createMessage('assistant', [], { toolCalls: [toolCall('c', 'f', '{}', { thought_signature_b64: 42 })] });
    expect(await refusal([user('go'), odd, result('c', 'ok')])).to.match(/extras\.thought_signature_b64 must be a base64 string, not number/);
  });

  it('gemini-3: a turn of unsigned calls gets the skip signature on its first call only; signed turns are left as they are', async () => {
    const unsigned = await contentsOf([user('go'), ask, result('c1', '1'), result('c2', '2'), result('c3', '3')], 'gemini-3-flash-preview');
    expect(unsigned[1]!.parts.map((part) => part['thoughtSignature'])).to.deep.equal([undefined, 'skip_thought_signature_validator', undefined, undefined]);
    const signedAsk = createMessage('assistant', [], { toolCalls: [toolCall('c1', 'f', '{}', { thought_signature_b64: 'c2ln' }), toolCall('c2', 'f', '{}')] });
    const signed = await contentsOf([user('go'), signedAsk, result('c1', '1'), result('c2', '2')], 'gemini-3-flash-preview');
    expect(signed[1]!.parts.map((part) => part['thoughtSignature'])).to.deep.equal(['c2ln', undefined]);
    const older = await contentsOf([user('go'), ask, result('c1', '1'), result('c2', '2'), result('c3', '3')], 'gemini-2.5-pro');
    expect(older[1]!.parts.map((part) => part['thoughtSignature'])).to.deep.equal([undefined, undefined, undefined, undefined]);
  });

  it('never changes the history it is given', async () => {
    const history = [user('go'), ask, result('c2', 'two'), result('c1', 'one'), result('c3', 'three')];
    const before = structuredClone(history);
    for (const message of history) Object.freeze(message);
    await contentsOf(history);
    expect(history).to.deep.equal(before);
  });

  it('a history of 2,000 messages converts (no recursion, no quadratic work on results)', async () => {
    const history: Message[] = [user('start')];
    for (let i = 0; i < 500; i++) {
      history.push(createMessage('assistant', `step ${i}`, { toolCalls: [toolCall(`a${i}`, 'f', '{}'), toolCall(`b${i}`, 'g', '{}')] }));
      history.push(result(`b${i}`, 'B'), result(`a${i}`, 'A'));
    }
    history.push(user('done?'));
    const contents = await contentsOf(history);
    expect(contents).to.have.length(1 + 500 * 2 + 1);
    expect(contents[2]!.parts.map((part) => (part['functionResponse'] as { name: string }).name)).to.deep.equal(['f', 'g']);
  });
});
