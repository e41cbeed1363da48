import { textPart, thinkPart, toolCall, toolCallPart, type ContentPart, type StreamedMessagePart } from '@kosong/core';
import { expect } from 'chai';

import { JsonValueScanner } from '../json-value-scanner.js';
import { StreamAssembler, type ToolCallDelta } from '../stream-assembler.js';

function delta(index: number | undefined, fields: Partial<Omit<ToolCallDelta, 'index'>>): ToolCallDelta {
  return { index, id: fields.id, name: fields.name, arguments: fields.arguments };
}

/** Runs a sequence of events through an assembler; returns the parts released after each event, and at the end. */
function run(events: readonly (ToolCallDelta | ContentPart)[]): { steps: StreamedMessagePart[][]; end: StreamedMessagePart[] } {
  let next = 0;
  const assembler = new StreamAssembler(() => `generated-${++next}`);
  const steps = events.map((event) => {
    const out: StreamedMessagePart[] = [];
    if ('index' in event) assembler.toolCall(event, out);
    else assembler.content(event, out);
    return out;
  });
  const end: StreamedMessagePart[] = [];
  assembler.finish(end);
  return { steps, end };
}

describe('StreamAssembler: tool-call deltas keyed by index', () => {
  it('streams sequential calls live: each call starts as soon as the previous one is complete', () => {
    const { steps, end } = run([
      textPart('Let me compute.'),
      delta(0, { id: 'call_a', name: 'add', arguments: '' }),
      delta(0, { arguments: '{"a": 2,' }),
      delta(0, { arguments: ' "b": 3}' }),
      delta(1, { id: 'call_m', name: 'multiply', arguments: '{"a": 4' }),
      delta(1, { arguments: ', "b": 5}' }),
    ]);
    expect(steps).to.deep.equal([
      [textPart('Let me compute.')],
      [toolCall('call_a', 'add', '')],
      [toolCallPart('{"a": 2,')],
      [toolCallPart(' "b": 3}')],
      [toolCall('call_m', 'multiply', '{"a": 4')],
      [toolCallPart(', "b": 5}')],
    ]);
    expect(end).to.deep.equal([]);
  });

  it('never mixes two interleaved calls: the second waits until the first is complete', () => {
    const { steps, end } = run([
      delta(0, { id: 'call_a', name: 'add', arguments: '{"a":' }),
      delta(1, { id: 'call_m', name: 'multiply', arguments: '{"a":' }),
      delta(0, { arguments: ' 2, "b":' }),
      delta(1, { arguments: ' 4, "b":' }),
      delta(1, { arguments: ' 5}' }),
      delta(0, { arguments: ' 3}' }),
    ]);
    expect(steps.flat().concat(end)).to.deep.equal([
      toolCall('call_a', 'add', '{"a":'),
      toolCallPart(' 2, "b":'),
      toolCallPart(' 3}'),
      toolCall('call_m', 'multiply', '{"a": 4, "b": 5}'),
    ]);
    expect(steps[5], 'the waiting call is released when the first completes').to.deep.equal([toolCallPart(' 3}'), toolCall('call_m', 'multiply', '{"a": 4, "b": 5}')]);
  });

  it('releases waiting calls at the end when the active one never looks complete', () => {
    const { steps, end } = run([
      delta(0, { id: 'a', name: 'ping', arguments: '' }),
      delta(1, { id: 'b', name: 'pong', arguments: '{}' }),
      delta(2, { id: 'c', name: 'pang' }),
    ]);
    expect(steps.flat()).to.deep.equal([toolCall('a', 'ping', '')]);
    expect(end).to.deep.equal([toolCall('b', 'pong', '{}'), toolCall('c', 'pang', null)]);
  });

  it('holds content back while a call is incomplete, keeping arrival order', () => {
    const { steps, end } = run([
      delta(0, { id: 'a', name: 'add', arguments: '{"a": 1' }),
      thinkPart('hmm'),
      delta(0, { arguments: ', "b": 2}' }),
      textPart('done'),
    ]);
    expect(steps).to.deep.equal([[toolCall('a', 'add', '{"a": 1')], [], [toolCallPart(', "b": 2}'), thinkPart('hmm')], [textPart('done')]]);
    expect(end).to.deep.equal([]);
  });

  it('generates an id for a call without one, and starts a call only once it has a name', () => {
    const { steps, end } = run([delta(0, { arguments: '{"x"' }), delta(0, { name: 'f', arguments: ': 1}' })]);
    expect(steps.flat().concat(end)).to.deep.equal([toolCall('generated-1', 'f', '{"x": 1}')]);
  });

  it('keeps the first id and name when a server repeats them on every delta', () => {
    const { steps } = run([delta(0, { id: 'a', name: 'f', arguments: '{"x":' }), delta(0, { id: 'a', name: 'f', arguments: '1}' })]);
    expect(steps.flat()).to.deep.equal([toolCall('a', 'f', '{"x":'), toolCallPart('1}')]);
  });

  it('copes with servers that send no index: a delta with a new id or name is a new call', () => {
    const { steps, end } = run([
      delta(undefined, { id: 'a', name: 'f', arguments: '{"x":' }),
      delta(undefined, { arguments: '1}' }),
      delta(undefined, { id: 'b', name: 'g', arguments: '{}' }),
    ]);
    expect(steps.flat().concat(end)).to.deep.equal([toolCall('a', 'f', '{"x":'), toolCallPart('1}'), toolCall('b', 'g', '{}')]);
  });

  it('starts a new call for a new id at a used index (Ollama and some gateways send index 0 for every call)', () => {
    const { steps, end } = run([
      delta(0, { id: 'a', name: 'f', arguments: '{"v":1}' }),
      delta(0, { id: 'b', name: 'f', arguments: '{"v":2}' }),
      delta(0, { id: 'c', name: 'g', arguments: '{"v":' }),
      delta(0, { arguments: '3}' }),
    ]);
    expect(steps.flat().concat(end)).to.deep.equal([toolCall('a', 'f', '{"v":1}'), toolCall('b', 'f', '{"v":2}'), toolCall('c', 'g', '{"v":'), toolCallPart('3}')]);
  });

  it('starts a new call for a new id at a used index with text in between, instead of failing', () => {
    const { steps, end } = run([
      delta(0, { id: 'a', name: 'f', arguments: '{"v":1}' }),
      textPart('and then'),
      delta(0, { id: 'b', name: 'f', arguments: '{"v":' }),
      delta(0, { arguments: '2}' }),
    ]);
    expect(steps.flat().concat(end)).to.deep.equal([toolCall('a', 'f', '{"v":1}'), textPart('and then'), toolCall('b', 'f', '{"v":'), toolCallPart('2}')]);
  });

  it('a new id at the index of a call still streaming waits for it (or the end), like any other call', () => {
    const { end, steps } = run([delta(0, { id: 'a', name: 'f', arguments: '{"v":' }), delta(0, { id: 'b', name: 'g', arguments: '{}' }), delta(1, { id: 'c', name: 'h', arguments: '{}' })]);
    expect(steps.flat()).to.deep.equal([toolCall('a', 'f', '{"v":')]);
    expect(end).to.deep.equal([toolCall('b', 'g', '{}'), toolCall('c', 'h', '{}')]);
  });

  it('rejects arguments for a call that was already complete and closed', () => {
    const assembler = new StreamAssembler(() => 'id');
    const out: StreamedMessagePart[] = [];
    assembler.toolCall(delta(0, { id: 'a', name: 'f', arguments: '{}' }), out);
    assembler.toolCall(delta(1, { id: 'b', name: 'g', arguments: '{}' }), out);
    assembler.toolCall(delta(0, { arguments: '  ' }), out); // whitespace is harmless
    expect(() => assembler.toolCall(delta(0, { arguments: '{"late": 1}' }), out)).to.throw(/more arguments for tool call #0 \(f\)/);
  });

  it('rejects a call that never got a name', () => {
    const assembler = new StreamAssembler(() => 'id');
    const out: StreamedMessagePart[] = [];
    assembler.toolCall(delta(3, { id: 'a', arguments: '{}' }), out);
    expect(() => assembler.finish(out)).to.throw(/tool call #3 without a function name/);
  });
});

describe('JsonValueScanner', () => {
  function complete(...fragments: string[]): boolean {
    const scanner = new JsonValueScanner();
    for (const fragment of fragments) scanner.feed(fragment);
    return scanner.complete;
  }

  it('spots the end of an object or array across fragments, ignoring brackets in strings', () => {
    expect(complete('{"a": "}', '{[", "b": [1, {"c": "\\"}"}]', '}')).to.equal(true);
    expect(complete('{"a": "}"')).to.equal(false);
    expect(complete('[1, 2]', '  \n')).to.equal(true);
    expect(complete('')).to.equal(false);
  });

  it('never calls scalars or text after the value complete', () => {
    expect(complete('"text"')).to.equal(false);
    expect(complete('42')).to.equal(false);
    expect(complete('{}', 'x')).to.equal(false);
  });
});
