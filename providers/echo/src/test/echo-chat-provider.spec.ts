import {
  APIStatusError,
  ChatProviderError,
  createMessage,
  generate,
  imageURLPart,
  step,
  textPart,
  thinkPart,
  tokenUsage,
  toolCall,
  toolOk,
  type Message,
  type Tool,
  type Toolset,
} from '@kosong/core';
import { toolResultToMessage } from '@kosong/core/context-kit';
import { expect } from 'chai';
import { getEventListeners } from 'node:events';

import { EchoChatProvider, EchoScriptError } from '../index.js';
import { WORKED_EXAMPLE, WORKED_EXAMPLE_PARTS } from './fixtures.js';
import { collect, drain, lines, rejection, user } from './support.js';

describe('EchoChatProvider', () => {
  it('is named "echo", model "echo", with no thinking effort', () => {
    const provider = new EchoChatProvider();
    expect([provider.name, provider.modelName, provider.thinkingEffort]).to.deep.equal(['echo', 'echo', undefined]);
  });

  it('streams the parts of the last user message, with its id and usage (kosong test 41)', async () => {
    const stream = await new EchoChatProvider().generate('', [], [user(WORKED_EXAMPLE)]);
    expect(await collect(stream)).to.deep.equal(WORKED_EXAMPLE_PARTS);
    expect(stream.id).to.equal('echo-42');
    expect(stream.usage).to.deep.equal(tokenUsage({ inputOther: 10, output: 2, inputCacheRead: 3 }));
    expect(stream.finishReason).to.equal(undefined);
    expect(stream.traceId).to.equal(undefined);
  });

  it('merges through generate(): a tool call streamed in fragments (kosong test 42)', async () => {
    const script = `
      text: Hello
      tool_call: {"id": "call-1", "name": "get_weather", "arguments": null}
      tool_call_part: {
      tool_call_part: "\\"city\\":\\"Hangzhou\\""
      tool_call_part: }
      tool_call_part:
      finish: tool_calls
    `;
    const result = await generate({ provider: new EchoChatProvider(), systemPrompt: '', history: [user(script)] });
    expect(result.message.content).to.deep.equal([textPart('Hello')]);
    expect(result.message.toolCalls).to.deep.equal([toolCall('call-1', 'get_weather', '{"city":"Hangzhou"}')]);
    expect(result.usage).to.equal(undefined);
    expect(result.id).to.equal(undefined);
    expect(result.finishReason).to.equal('tool_calls');
  });

  it('reads only the text parts of the last message, joined without a separator', async () => {
    const message = createMessage('user', [textPart('text: a'), thinkPart('text: ignored'), imageURLPart('u'), textPart('b\ntext: c')]);
    const stream = await new EchoChatProvider().generate('', [], [user('text: earlier'), message]);
    expect(await collect(stream)).to.deep.equal([textPart('ab'), textPart('c')]);
  });

  it('ignores the system prompt and the tools', async () => {
    const tools: Tool[] = [{ name: 'x', description: 'y', parameters: { type: 'object' } }];
    const stream = await new EchoChatProvider().generate('text: not this', tools, [user('text: this')]);
    expect(await collect(stream)).to.deep.equal([textPart('this')]);
  });

  it('streams new part objects on every call', async () => {
    const provider = new EchoChatProvider();
    const first = await collect(await provider.generate('', [], [user('text: a')]));
    const second = await collect(await provider.generate('', [], [user('text: a')]));
    expect(first).to.deep.equal(second);
    expect(first[0]).to.not.equal(second[0]);
  });

  describe('multi-step scripts (steps separated by ---)', () => {
    const script = lines(
      'text: Let me look.',
      'tool_call: {"id": "c1", "name": "ls", "arguments": "{}"}',
      '  ---  ',
      'id: step-2',
      'tool_call: {"id": "c2", "name": "cat", "arguments": "{}"}',
      '---',
      'text: Two files.',
    );

    it('plays the step after as many assistant messages as follow the last user message', async () => {
      const provider = new EchoChatProvider();
      const history = [user('text: an earlier turn'), createMessage('assistant', 'earlier'), user(script)];
      expect(await collect(await provider.generate('', [], history))).to.deep.equal([textPart('Let me look.'), toolCall('c1', 'ls', '{}')]);

      history.push(assistantCalling('c1'), createMessage('tool', 'a b', { toolCallId: 'c1' }));
      const second = await provider.generate('', [], history);
      expect(await collect(second)).to.deep.equal([toolCall('c2', 'cat', '{}')]);
      expect(second.id).to.equal('step-2');

      history.push(assistantCalling('c2'), createMessage('tool', 'x', { toolCallId: 'c2' }));
      expect(await collect(await provider.generate('', [], history))).to.deep.equal([textPart('Two files.')]);
    });

    it('runs a tool round trip through step() twice, as an agent loop does', async () => {
      const toolset = echoTools();
      const history = [user(lines('tool_call: {"id": "c1", "name": "shout", "arguments": "{\\"text\\": \\"hi\\"}"}', '---', 'text: It said HI.'))];
      const first = await step({ provider: new EchoChatProvider(), systemPrompt: '', toolset, history });
      const [result] = await first.toolResults();
      history.push(first.message, toolResultToMessage(result!));
      const second = await step({ provider: new EchoChatProvider(), systemPrompt: '', toolset, history });
      expect(second.toolCalls).to.deep.equal([]);
      expect(second.message.content).to.deep.equal([textPart('It said HI.')]);
      expect(result!.returnValue.output).to.equal('HI');
    });

    it('names lines as numbered in the whole script', async () => {
      const history = [user(lines('text: ok', '---', 'text: fine', 'banana: split')), createMessage('assistant', 'ok')];
      const error = await rejection(new EchoChatProvider().generate('', [], history));
      expect(error).to.be.instanceOf(EchoScriptError);
      expect((error as EchoScriptError).lineNumber).to.equal(4);
      expect((error as Error).message).to.equal("Unknown echo DSL kind 'banana' at line 4: 'banana: split'");
    });

    it('an empty step has no parts', async () => {
      const history = [user('text: a\n---\n---\ntext: c'), createMessage('assistant', 'a')];
      const error = await rejection(new EchoChatProvider().generate('', [], history));
      expect((error as Error).message).to.equal('EchoChatProvider DSL produced no streamable parts.');
    });
  });

  describe('errors (all as rejections of generate)', () => {
    it('rejects an empty history', async () => {
      const error = await rejection(new EchoChatProvider().generate('', [], []));
      expect(error).to.be.instanceOf(ChatProviderError);
      expect((error as Error).message).to.equal('EchoChatProvider requires at least one message in history.');
    });

    it('rejects a history without a user message', async () => {
      for (const role of ['assistant', 'system'] as const) {
        const error = await rejection(new EchoChatProvider().generate('', [], [createMessage(role, 'text: hi')]));
        expect(error).to.be.instanceOf(ChatProviderError);
        expect((error as Error).message).to.equal('EchoChatProvider needs a user message in history: its text is the script to play.');
      }
    });

    it('rejects a step the script does not have, saying how to write one (kosong test 44, extended to multi-step scripts)', async () => {
      const answered = [user('tool_call: {"id": "c", "name": "f", "arguments": "{}"}'), assistantCalling('c'), createMessage('tool', 'done', { toolCallId: 'c' })];
      const error = await rejection(new EchoChatProvider().generate('', [], answered));
      expect(error).to.be.instanceOf(ChatProviderError);
      expect((error as Error).message).to.equal(
        "EchoChatProvider: the script of the last user message has 1 step, and step 2 was asked for (the model has answered it 1 time); " +
          "write the response of each step of the turn, separated by lines of '---' (e.g. a tool call, then '---', then the text after its result).",
      );
      const three = [user('text: a\n---\ntext: b'), createMessage('assistant', 'a'), createMessage('assistant', 'b')];
      expect(((await rejection(new EchoChatProvider().generate('', [], three))) as Error).message).to.match(/has 2 steps, and step 3 was asked for \(the model has answered it 2 times\)/);
    });
    it('rejects a script without parts (kosong test 45)', async () => {
      for (const script of ['', '# only a comment', lines('id: x', 'usage: output=1', 'finish: stop'), '```\n```']) {
        const error = await rejection(new EchoChatProvider().generate('', [], [user(script)]));
        expect(error).to.be.instanceOf(ChatProviderError);
        expect((error as Error).message, JSON.stringify(script)).to.equal('EchoChatProvider DSL produced no streamable parts.');
      }
    });

    it('rejects object arguments with a ChatProviderError naming the line (kosong test 43)', async () => {
      const promise = new EchoChatProvider().generate('', [], [user('text: x\ntool_call: {"id": "c", "name": "f", "arguments": {"a": 1}}')]);
      const error = await rejection(promise);
      expect(error).to.be.instanceOf(EchoScriptError);
      expect(ChatProviderError.isInstance(error)).to.equal(true);
      expect((error as EchoScriptError).lineNumber).to.equal(2);
      expect((error as Error).message).to.match(/^tool_call\.arguments must be a string at line 2, got dict/);
    });

    it('rejects with the simulated error of an error: line, before streaming anything', async () => {
      const error = await rejection(new EchoChatProvider().generate('', [], [user('text: partial\nerror: 502 bad gateway')]));
      expect(error).to.be.instanceOf(APIStatusError);
      expect([(error as APIStatusError).statusCode, (error as Error).message]).to.deep.equal([502, 'bad gateway']);
    });
  });

  describe('delay and abort', () => {
    it('an already-aborted signal rejects generate with its reason', async () => {
      const reason = new Error('gone');
      expect(await rejection(new EchoChatProvider().generate('', [], [user('text: a')], { signal: AbortSignal.abort(reason) }))).to.equal(reason);
    });

    it('waits delayMs before each part', async () => {
      const provider = new EchoChatProvider({ delayMs: 20 });
      const started = performance.now();
      expect(await collect(await provider.generate('', [], [user(lines('text: a', 'text: b', 'text: c'))]))).to.have.length(3);
      expect(performance.now() - started).to.be.at.least(55);
    });

    it('an abort ends a pending delay at once with the reason, and leaves no listener', async () => {
      const controller = new AbortController();
      const reason = new Error('stop');
      const stream = await new EchoChatProvider({ delayMs: 5000 }).generate('', [], [user('text: a\ntext: b')], { signal: controller.signal });
      setTimeout(() => controller.abort(reason), 10);
      const started = performance.now();
      const { parts, error } = await drain(stream);
      expect(error).to.equal(reason);
      expect(parts).to.deep.equal([]);
      expect(performance.now() - started).to.be.lessThan(1000);
      expect(getEventListeners(controller.signal, 'abort')).to.have.length(0);
    });

    it('without a delay, an abort between parts stops the stream before the next one', async () => {
      const controller = new AbortController();
      const stream = await new EchoChatProvider().generate('', [], [user('text: a\ntext: b\ntext: c')], { signal: controller.signal });
      const seen: unknown[] = [];
      let caught: unknown;
      try {
        for await (const part of stream) {
          seen.push(part);
          controller.abort(new Error('enough'));
        }
      } catch (error) {
        caught = error;
      }
      expect(seen).to.deep.equal([textPart('a')]);
      expect((caught as Error).message).to.equal('enough');
    });
  });

  it('withThinking returns a copy with the effort, that echoes the same way', async () => {
    const provider = new EchoChatProvider({ delayMs: 0 });
    const copy = provider.withThinking('high');
    expect(copy).to.be.instanceOf(EchoChatProvider).and.not.equal(provider);
    expect(copy.thinkingEffort).to.equal('high');
    expect(provider.thinkingEffort).to.equal(undefined);
    expect(await collect(await copy.generate('', [], [user('text: x')]))).to.deep.equal([textPart('x')]);
  });
});

/** An assistant message calling one tool. */
function assistantCalling(id: string): Message {
  return createMessage('assistant', [], { toolCalls: [toolCall(id, 'f', '{}')] });
}

/** A toolset with one tool, `shout`, that upper-cases its `text`. */
function echoTools(): Toolset {
  return {
    tools: [{ name: 'shout', description: 'Upper-cases the text.', parameters: { type: 'object', properties: { text: { type: 'string' } } } }],
    handle: (call) => ({
      toolCallId: call.id,
      returnValue: toolOk({ output: (JSON.parse(call.function.arguments ?? '{}') as { text: string }).text.toUpperCase() }),
    }),
  };
}
