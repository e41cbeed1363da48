import { inspect } from 'node:util';

import { APIStatusError, InvalidGenerationOptionError, textPart } from '@kosong/core';
import { MockChatProvider } from '@kosong/provider-echo';
import { expect } from 'chai';

import { FallbackChatProvider, fallbackProvider, type FallbackListenerName, type FallbackPolicy } from '../index.js';
import { TEST_KEY, collect, openai, user } from './support.js';

const failing = (status = 500) => new MockChatProvider([], { generateError: new APIStatusError(status, `status ${status}`), modelName: `failing-${status}` });
const answering = (text = 'ok') => new MockChatProvider([textPart(text)], { modelName: `answers-${text}` });

describe('fallbackProvider: the chain and its policy', () => {
  describe('validation', () => {
    it('an unknown policy option is a TypeError naming it (and the known ones)', () => {
      expect(() => fallbackProvider([answering()], { onswitch: () => undefined } as FallbackPolicy)).to.throw(TypeError, /fallbackProvider: unknown option "onswitch" \(its options: shouldSwitch, breaker, onSwitch/);
      expect(() => fallbackProvider([answering()], { breaker: { cooldownMs: 5 } } as unknown as FallbackPolicy)).to.throw(TypeError, /policy\.breaker: unknown option "cooldownMs"/);
    });

    it('values of the wrong type or range are TypeErrors', () => {
      const bad: [unknown, RegExp][] = [
        [null, /the options must be an object/],
        [[], /the options must be an object/],
        [{ shouldSwitch: true }, /policy\.shouldSwitch must be a function, got true/],
        [{ onSwitch: 'log' }, /policy\.onSwitch must be a function, got "log"/],
        [{ onListenerError: {} }, /policy\.onListenerError must be a function/],
        [{ breaker: true }, /policy\.breaker must be an object or false, got true/],
        [{ breaker: { consecutiveFailures: 0 } }, /consecutiveFailures must be a positive integer, got 0/],
        [{ breaker: { consecutiveFailures: 1.5 } }, /consecutiveFailures must be a positive integer/],
        [{ breaker: { halfOpenAfterMs: -1 } }, /halfOpenAfterMs must be a finite number of ms, 0 or more, got -1/],
        [{ breaker: { halfOpenAfterMs: Infinity } }, /halfOpenAfterMs must be a finite number/],
      ];
      for (const [policy, message] of bad) expect(() => fallbackProvider([answering()], policy as FallbackPolicy), String(message)).to.throw(TypeError, message);
    });

    it('the models must be a non-empty array of chat providers', () => {
      expect(() => fallbackProvider([])).to.throw(TypeError, /non-empty array/);
      expect(() => fallbackProvider('openai' as never)).to.throw(TypeError, /non-empty array/);
      expect(() => fallbackProvider([answering(), { name: 'x', modelName: 'y' } as never])).to.throw(TypeError, /models\[1\] is not a chat provider/);
    });

    it('undefined fields are the defaults; a chain of one is a breaker around one model', async () => {
      const provider = fallbackProvider([answering('solo')], { shouldSwitch: undefined, breaker: undefined });
      expect(await collect(await provider.generate('', [], [user('hi')]))).to.deep.equal([textPart('solo')]);
      expect(provider).to.be.instanceOf(FallbackChatProvider);
    });
  });

  describe('name, modelName, copies', () => {
    it('name and modelName are the model a call starts with', () => {
      const provider = fallbackProvider([answering('a'), answering('b')]);
      expect([provider.name, provider.modelName]).to.deep.equal(['mock', 'answers-a']);
      expect(provider.current).to.be.instanceOf(MockChatProvider);
    });

    it('withThinking and withGeneration apply to every model, and leave the original as it was', async () => {
      const first = failing();
      const second = answering();
      const provider = fallbackProvider([first, second]);
      const copy = provider.withThinking('low').withGeneration({ temperature: 0.3 });
      expect(copy).to.be.instanceOf(FallbackChatProvider);
      expect(copy.thinkingEffort).to.equal('low');
      expect(copy.generation).to.deep.equal({ temperature: 0.3 });
      expect(provider.thinkingEffort).to.equal(undefined);
      expect(provider.generation).to.deep.equal({});
      const models = (copy as unknown as { models: MockChatProvider[] }).models;
      expect(models.map((m) => [m.thinkingEffort, m.generation])).to.deep.equal([
        ['low', { temperature: 0.3 }],
        ['low', { temperature: 0.3 }],
      ]);
      await collect(await copy.generate('', [], [user('hi')], { generation: { seed: 7 } }));
      expect(models[1]!.lastRequest?.generation).to.deep.equal({ temperature: 0.3, seed: 7 });
      expect(second.generateCalls, 'the original models are not called by the copy').to.equal(0);
    });

    it('withGeneration checks the options at once', () => {
      expect(() => fallbackProvider([answering()]).withGeneration({ temperature: -1 })).to.throw(InvalidGenerationOptionError);
    });
  });

  describe('toJSON and inspect', () => {
    it('show each model as its own toJSON does, with its breaker, and never a key', () => {
      const withKey = openai('http://127.0.0.1:9/v1', 'gpt-test');
      // A provider of its own, without toJSON, holding a key in a plain field: only its name and model are shown.
      const bare = {
        name: 'custom',
        modelName: 'bare-model',
        apiKey: TEST_KEY,
        thinkingEffort: undefined,
        generation: {},
        generate: () => Promise.reject(new Error('no')),
        withThinking() {
          return this;
        },
        withGeneration() {
          return this;
        },
      };
      const provider = fallbackProvider([withKey, bare]);
      const json = JSON.parse(JSON.stringify(provider)) as Record<string, unknown>;
      expect(json).to.deep.equal({
        name: 'openai',
        modelName: 'gpt-test',
        models: [
          { ...(JSON.parse(JSON.stringify(withKey)) as object), breaker: 'closed' },
          { name: 'custom', modelName: 'bare-model', breaker: 'closed' },
        ],
      });
      const shown = JSON.stringify(provider) + inspect(provider, { depth: 5 });
      expect(shown).not.to.include(TEST_KEY);
      expect(inspect(provider)).to.match(/^FallbackChatProvider \{/);
    });
  });

  describe('listeners', () => {
    it('a listener that throws or rejects never changes the call; its failure goes to onListenerError', async () => {
      const failures: [unknown, FallbackListenerName][] = [];
      const provider = fallbackProvider([failing(), failing(502), answering('third')], {
        onSwitch: (event) => {
          if (event.from.index === 0) throw new Error('listener bug');
          return Promise.reject(new Error('async listener bug'));
        },
        onListenerError: (error, listener) => void failures.push([error, listener]),
      });
      expect(await collect(await provider.generate('', [], [user('hi')]))).to.deep.equal([textPart('third')]);
      await new Promise((resolve) => setImmediate(resolve));
      expect(failures.map(([error, listener]) => [(error as Error).message, listener])).to.deep.equal([
        ['listener bug', 'onSwitch'],
        ['async listener bug', 'onSwitch'],
      ]);
    });

    it('without onListenerError, one line on stderr; an onListenerError that throws goes there too', async () => {
      const written: string[] = [];
      const write = process.stderr.write.bind(process.stderr);
      process.stderr.write = ((chunk: string) => (written.push(String(chunk)), true)) as typeof process.stderr.write;
      try {
        await collect(await fallbackProvider([failing(), answering()], { onSwitch: () => { throw new Error('oops'); } }).generate('', [], [user('hi')]));
        await collect(
          await fallbackProvider([failing(), answering()], {
            onSwitch: () => {
              throw new Error('again');
            },
            onListenerError: () => {
              throw new Error('handler bug');
            },
          }).generate('', [], [user('hi')]),
        );
      } finally {
        process.stderr.write = write;
      }
      expect(written).to.deep.equal(['[kosong] fallbackProvider onSwitch failed: oops\n', '[kosong] fallbackProvider onSwitch failed: handler bug\n']);
    });

    it('onBreakerChange hears each change of each model', async () => {
      const changes: string[] = [];
      const provider = fallbackProvider([failing(), failing(503), answering()], {
        breaker: { consecutiveFailures: 1 },
        onBreakerChange: (event) => void changes.push(`${event.model.modelName}:${event.state}`),
      });
      await collect(await provider.generate('', [], [user('hi')]));
      expect(changes).to.deep.equal(['failing-500:open', 'failing-503:open']);
    });
  });
});
