import { InvalidGenerationOptionError, textPart, type ChatProvider, type GenerationOptions, type Tool } from '@kosong/core';
import { expect } from 'chai';

import { ChaosChatProvider, EchoChatProvider, MockChatProvider, RequestLog, ScriptedEchoChatProvider, type RecordedRequest } from '../index.js';
import { collect, rejection, user } from './support.js';

type Recording = ChatProvider & { readonly requests: readonly RecordedRequest[] };

const tools: readonly Tool[] = [{ name: 'add', description: 'Adds.', parameters: { type: 'object' } }];

/** Each offline provider, fresh, able to answer two calls whose history is `text: hi`. */
const providers: Record<string, () => Recording> = {
  MockChatProvider: () => new MockChatProvider([textPart('hi')]),
  EchoChatProvider: () => new EchoChatProvider(),
  ScriptedEchoChatProvider: () => new ScriptedEchoChatProvider(['text: one', 'text: two']),
  ChaosChatProvider: () => new ChaosChatProvider(new ScriptedEchoChatProvider(['text: one', 'text: two']), { seed: 3, errorProbability: 0, corruptToolCallProbability: 0 }),
};

describe('offline providers and generation options', () => {
  for (const [name, make] of Object.entries(providers)) {
    describe(name, () => {
      it('records what each call asked for: system prompt, tools, history length, effective options, thinking', async () => {
        const provider = make().withThinking('low').withGeneration({ temperature: 0.4, maxOutputTokens: 10 }) as Recording;
        await collect(await provider.generate('sys', tools, [user('text: hi')], { generation: { temperature: 1, toolChoice: 'required' } }));
        await collect(await provider.generate('', [], [user('x'), user('text: hi')]));
        expect(provider.requests).to.deep.equal([
          { systemPrompt: 'sys', tools, historyLength: 1, generation: { temperature: 1, maxOutputTokens: 10, toolChoice: 'required' }, thinkingEffort: 'low' },
          { systemPrompt: '', tools: [], historyLength: 2, generation: { temperature: 0.4, maxOutputTokens: 10 }, thinkingEffort: 'low' },
        ]);
        expect(provider.requests[0]!.tools).to.equal(tools);
        expect(Object.isFrozen(provider.requests[0])).to.equal(true);
      });

      it('withGeneration returns a configured copy and leaves the original (and its log) alone', async () => {
        const original = make();
        const configured = original.withGeneration({ seed: 7 }) as Recording;
        expect(configured).to.not.equal(original);
        expect(original.generation).to.deep.equal({});
        expect(configured.generation).to.deep.equal({ seed: 7 });
        expect(configured.withGeneration({ topP: 0.5 }).generation).to.deep.equal({ seed: 7, topP: 0.5 });
        expect(configured.withThinking('high').generation).to.deep.equal({ seed: 7 });
        await collect(await configured.generate('', [], [user('text: hi')]));
        expect(original.requests).to.deep.equal([]);
      });

      it('refuses bad options: at once in withGeneration, and per call as a rejection that records nothing', async () => {
        const provider = make();
        expect(() => provider.withGeneration({ temperature: -1 })).to.throw(InvalidGenerationOptionError, '"temperature"');
        expect(() => provider.withGeneration({ temprature: 1 } as GenerationOptions)).to.throw(InvalidGenerationOptionError, 'unknown option');
        const error = await rejection(provider.generate('', tools, [user('text: hi')], { generation: { toolChoice: { type: 'tool', name: 'sub' } } }));
        expect(error).to.be.instanceOf(InvalidGenerationOptionError).and.include({ option: 'toolChoice' });
        expect(provider.requests).to.deep.equal([]);
        // nothing consumed: the next call gets the first answer
        const parts = await collect(await provider.generate('', [], [user('text: hi')]));
        expect(parts).to.have.length.above(0);
      });
    });
  }

  it('ScriptedEchoChatProvider: a refused call consumes no script', async () => {
    const provider = new ScriptedEchoChatProvider(['text: one']);
    await rejection(provider.generate('', [], [], { generation: { maxOutputTokens: 0 } }));
    expect(provider.remaining).to.equal(1);
  });

  it('ChaosChatProvider records calls that an injected fault failed, and wraps the inner copy keeping its seed', async () => {
    const inner = new MockChatProvider([textPart('hi')]);
    const chaos = new ChaosChatProvider(inner, { seed: 5, errorProbability: 1, faults: { '503': 1 } }).withGeneration({ seed: 1 });
    await rejection(chaos.generate('s', [], [user('go')], { generation: { topP: 0.1 } }));
    expect(chaos.requests.map((r) => r.generation)).to.deep.equal([{ seed: 1, topP: 0.1 }]);
    expect(chaos.seed).to.equal(5);
    expect(inner.generateCalls).to.equal(0);
    expect(inner.generation).to.deep.equal({});
  });

  it('MockChatProvider.lastRequest carries the effective options too', async () => {
    const provider = new MockChatProvider([textPart('hi')]).withGeneration({ seed: 2 });
    await collect(await provider.generate('', [], [], { generation: { temperature: 0 } }));
    expect(provider.lastRequest?.generation).to.deep.equal({ seed: 2, temperature: 0 });
  });

  it('RequestLog keeps the most recent requests up to its limit and counts all', () => {
    const log = new RequestLog(3);
    for (let i = 0; i < 10; i++) log.record({ systemPrompt: String(i), tools: [], history: [], generation: {}, thinkingEffort: undefined });
    expect(log.entries.map((r) => r.systemPrompt)).to.deep.equal(['7', '8', '9']);
    expect(log.count).to.equal(10);
    expect(log.last?.systemPrompt).to.equal('9');
  });

  it('a long session keeps the log bounded (the default limit is 1000)', async () => {
    const provider = new MockChatProvider([textPart('hi')]);
    for (let i = 0; i < 1_050; i++) await provider.generate('', [], []);
    expect(provider.requests).to.have.length(1_000);
    expect(provider.generateCalls).to.equal(1_050);
  });
});
