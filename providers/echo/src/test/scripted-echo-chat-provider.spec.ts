import { APIConnectionError, APIStatusError, ChatProviderError, createMessage, generate, textPart, tokenUsage, toolCall } from '@kosong/core';
import { expect } from 'chai';

import { EchoScriptError, ScriptedEchoChatProvider } from '../index.js';
import { WORKED_EXAMPLE, WORKED_EXAMPLE_PARTS } from './fixtures.js';
import { collect, rejection, user } from './support.js';

/** Text of the single text part a provider streams next. */
async function nextText(provider: ScriptedEchoChatProvider): Promise<string> {
  const parts = await collect(await provider.generate('', [], []));
  expect(parts).to.have.length(1);
  return (parts[0] as { text: string }).text;
}

describe('ScriptedEchoChatProvider', () => {
  it('is named "scripted_echo", model "scripted_echo", with no thinking effort', () => {
    const provider = new ScriptedEchoChatProvider([]);
    expect([provider.name, provider.modelName, provider.thinkingEffort]).to.deep.equal(['scripted_echo', 'scripted_echo', undefined]);
  });

  it('plays one script per call, in order, whatever the history (kosong test 46)', async () => {
    const first = WORKED_EXAMPLE.replace('id: echo-42', 'id: scripted-1').replace(
      'usage: {"input_other": 10, "output": 2, "input_cache_read": 3}',
      'usage: {"input_other": 4, "output": 1, "input_cache_read": 2}',
    );
    const provider = new ScriptedEchoChatProvider([first, 'id: scripted-2\ntext: second turn']);
    const history = [user('hi'), createMessage('tool', 'result', { toolCallId: 'call-0' })];

    const one = await provider.generate('system', [], history);
    expect(await collect(one)).to.deep.equal(WORKED_EXAMPLE_PARTS);
    expect(one.id).to.equal('scripted-1');
    expect(one.usage).to.deep.equal(tokenUsage({ inputOther: 4, output: 1, inputCacheRead: 2 }));

    const two = await provider.generate('', [], []);
    expect(await collect(two)).to.deep.equal([textPart('second turn')]);
    expect(two.id).to.equal('scripted-2');
    expect(two.usage).to.equal(undefined);
  });

  it('merges through generate() (kosong test 48)', async () => {
    const provider = new ScriptedEchoChatProvider([
      'text: Hello\ntool_call: {"id": "call-1", "name": "get_weather", "arguments": null}\ntool_call_part: {\ntool_call_part: "\\"city\\":\\"Hangzhou\\""\ntool_call_part: }\ntool_call_part:',
    ]);
    const result = await generate({ provider, systemPrompt: '', history: [createMessage('assistant', 'ignored')] });
    expect(result.message.content).to.deep.equal([textPart('Hello')]);
    expect(result.message.toolCalls).to.deep.equal([toolCall('call-1', 'get_weather', '{"city":"Hangzhou"}')]);
  });

  it('counts remaining scripts and turns', async () => {
    const provider = new ScriptedEchoChatProvider(['text: a', 'text: b']);
    expect([provider.remaining, provider.turn]).to.deep.equal([2, 0]);
    expect(await nextText(provider)).to.equal('a');
    expect([provider.remaining, provider.turn]).to.deep.equal([1, 1]);
    expect(await nextText(provider)).to.equal('b');
    expect([provider.remaining, provider.turn]).to.deep.equal([0, 2]);
  });

  it('running out rejects with "exhausted at turn N." every time (kosong test 47)', async () => {
    const provider = new ScriptedEchoChatProvider(['text: only']);
    expect(await nextText(provider)).to.equal('only');
    for (let i = 0; i < 2; i++) {
      const error = await rejection(provider.generate('', [], []));
      expect(error).to.be.instanceOf(ChatProviderError);
      expect((error as Error).message).to.equal('ScriptedEchoChatProvider exhausted at turn 2.');
    }
    expect((await rejection(new ScriptedEchoChatProvider([]).generate('', [], [])) as Error).message).to.equal(
      'ScriptedEchoChatProvider exhausted at turn 1.',
    );
  });

  it('a script is consumed even when it throws, so a retry gets the next one', async () => {
    const provider = new ScriptedEchoChatProvider(['error: 503', 'error: connection reset', 'bogus line', 'text: finally']);
    const status = await rejection(provider.generate('', [], []));
    expect(status).to.be.instanceOf(APIStatusError);
    expect((status as APIStatusError).statusCode).to.equal(503);
    expect(provider.remaining).to.equal(3);
    expect(await rejection(provider.generate('', [], []))).to.be.instanceOf(APIConnectionError);
    const parse = await rejection(provider.generate('', [], []));
    expect(parse).to.be.instanceOf(EchoScriptError);
    expect((parse as Error).message).to.equal("Invalid echo DSL at line 1: 'bogus line'");
    expect(await nextText(provider)).to.equal('finally');
    expect(provider.turn).to.equal(4);
  });

  it('rejects (and consumes) a script without parts (kosong test 50)', async () => {
    const provider = new ScriptedEchoChatProvider(['# comment only\n```', 'text: next']);
    const error = await rejection(provider.generate('', [], []));
    expect(error).to.be.instanceOf(ChatProviderError);
    expect((error as Error).message).to.equal('ScriptedEchoChatProvider DSL produced no streamable parts.');
    expect(await nextText(provider)).to.equal('next');
  });

  it('rejects object arguments (kosong test 49)', async () => {
    const provider = new ScriptedEchoChatProvider(['tool_call: {"id": "c", "name": "f", "arguments": {"a": 1}}']);
    expect(ChatProviderError.isInstance(await rejection(provider.generate('', [], [])))).to.equal(true);
  });

  it('an already-aborted call rejects with the reason and consumes nothing', async () => {
    const provider = new ScriptedEchoChatProvider(['text: a']);
    const reason = new Error('aborted');
    expect(await rejection(provider.generate('', [], [], { signal: AbortSignal.abort(reason) }))).to.equal(reason);
    expect(provider.remaining).to.equal(1);
    expect(await nextText(provider)).to.equal('a');
  });

  it('copies its input: later changes to the array do not matter; any iterable works', async () => {
    const scripts = ['text: a'];
    const provider = new ScriptedEchoChatProvider(scripts);
    scripts.push('text: b');
    expect(provider.remaining).to.equal(1);
    function* generated(): Generator<string> {
      yield 'text: x';
      yield 'text: y';
    }
    const fromGenerator = new ScriptedEchoChatProvider(generated());
    expect([await nextText(fromGenerator), await nextText(fromGenerator)]).to.deep.equal(['x', 'y']);
  });

  it('withThinking copies the remaining queue: the two consume independently', async () => {
    const provider = new ScriptedEchoChatProvider(['text: 1', 'text: 2', 'text: 3']);
    expect(await nextText(provider)).to.equal('1');
    const copy = provider.withThinking('low');
    expect(copy).to.be.instanceOf(ScriptedEchoChatProvider).and.not.equal(provider);
    expect(copy.thinkingEffort).to.equal('low');
    expect(provider.thinkingEffort).to.equal(undefined);
    expect([copy.remaining, copy.turn]).to.deep.equal([2, 1]);

    expect(await nextText(copy)).to.equal('2');
    expect(await nextText(copy)).to.equal('3');
    expect((await rejection(copy.generate('', [], [])) as Error).message).to.equal('ScriptedEchoChatProvider exhausted at turn 4.');
    expect(provider.remaining, 'the original keeps its scripts').to.equal(2);
    expect(await nextText(provider)).to.equal('2');
    expect(copy.remaining).to.equal(0);
  });

  it('trace receives each turn and its script as JSON', async () => {
    const trace: string[] = [];
    const provider = new ScriptedEchoChatProvider(['text: a', 'error: 500\n"x"'], { trace: (line) => trace.push(line) });
    await nextText(provider);
    await rejection(provider.generate('', [], []));
    await rejection(provider.generate('', [], []));
    expect(trace).to.deep.equal(['SCRIPTED_ECHO TURN 1: "text: a"', 'SCRIPTED_ECHO TURN 2: "error: 500\\n\\"x\\""']);
  });

  it('delayMs applies to its streams', async () => {
    const provider = new ScriptedEchoChatProvider(['text: a\ntext: b'], { delayMs: 25 });
    const started = performance.now();
    await collect(await provider.generate('', [], []));
    expect(performance.now() - started).to.be.at.least(45);
  });
});
