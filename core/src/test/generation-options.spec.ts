import { expect } from 'chai';

import {
  ChatProviderError,
  InvalidGenerationOptionError,
  isRetryableError,
  UnsupportedGenerationOptionError,
  type GenerationOptions,
  type Tool,
} from '../index.js';
import {
  GENERATION_OPTION_NAMES,
  mergeGenerationOptions,
  rejectUnsupportedGenerationOptions,
  resolveGenerationOptions,
  updateGenerationOptions,
  validateGenerationOptions,
} from '../provider-kit/index.js';

const tool = (name: string): Tool => ({ name, description: name, parameters: { type: 'object' } });

/** The error `fn` throws (fails the test when it throws nothing). */
function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  expect.fail('expected a throw');
}

describe('generation options', () => {
  describe('validateGenerationOptions', () => {
    it('accepts every option at its bounds and returns a frozen copy without unset fields', () => {
      const given = {
        maxOutputTokens: 1,
        temperature: 2,
        topP: 0,
        stopSequences: ['\n\n', 'END'],
        seed: -7,
        toolChoice: { type: 'tool', name: 'add' },
        parallelToolCalls: false,
        // a JavaScript caller's "not set"
        ...({ maxOutputTokens: undefined } as object),
      } as GenerationOptions;
      const { maxOutputTokens: _unset, ...expected } = given;
      const checked = validateGenerationOptions(given);
      expect(checked).to.deep.equal(expected);
      expect(checked).to.not.have.property('maxOutputTokens');
      expect(Object.isFrozen(checked)).to.equal(true);
      expect(Object.isFrozen(checked.stopSequences)).to.equal(true);
      expect(Object.isFrozen(checked.toolChoice)).to.equal(true);
      expect(checked.stopSequences).to.not.equal(given.stopSequences, 'a copy: the caller may change its array later');
      expect(validateGenerationOptions({ temperature: 0, topP: 1, maxOutputTokens: Number.MAX_SAFE_INTEGER })).to.deep.equal({
        temperature: 0,
        topP: 1,
        maxOutputTokens: Number.MAX_SAFE_INTEGER,
      });
      for (const choice of ['auto', 'none', 'required'] as const) expect(validateGenerationOptions({ toolChoice: choice })).to.deep.equal({ toolChoice: choice });
    });

    const bad: readonly [string, unknown][] = [
      ['maxOutputTokens', 0],
      ['maxOutputTokens', -1],
      ['maxOutputTokens', 1.5],
      ['maxOutputTokens', '100'],
      ['maxOutputTokens', 2 ** 60],
      ['maxOutputTokens', Number.NaN],
      ['temperature', Number.NaN],
      ['temperature', Number.POSITIVE_INFINITY],
      ['temperature', -0.1],
      ['temperature', 2.01],
      ['temperature', '0.5'],
      ['topP', 1.5],
      ['topP', -1],
      ['topP', null],
      ['stopSequences', 'END'],
      ['stopSequences', ['END', '']],
      ['stopSequences', ['END', 5]],
      ['stopSequences', { 0: 'END', length: 1 }],
      ['seed', 1.5],
      ['seed', Number.NaN],
      ['seed', 2 ** 53],
      ['toolChoice', 'any'],
      ['toolChoice', { type: 'function', function: { name: 'add' } }],
      ['toolChoice', { type: 'tool', name: '' }],
      ['toolChoice', { type: 'tool' }],
      ['toolChoice', null],
      ['parallelToolCalls', 'yes'],
      ['parallelToolCalls', 1],
    ];
    for (const [option, value] of bad) {
      it(`refuses ${option} = ${JSON.stringify(value) ?? String(value)} with an InvalidGenerationOptionError naming the option and the provider`, () => {
        const error = thrown(() => validateGenerationOptions({ [option]: value } as GenerationOptions, 'acme'));
        expect(InvalidGenerationOptionError.isInstance(error), String(error)).to.equal(true);
        expect(error).to.include({ option, provider: 'acme' });
        expect((error as Error).message).to.contain(`"${option}"`).and.contain('"acme"');
      });
    }

    it('refuses an unknown (e.g. misspelt) option instead of ignoring it', () => {
      const error = thrown(() => validateGenerationOptions({ maxTokens: 100 } as GenerationOptions));
      expect(error).to.be.instanceOf(InvalidGenerationOptionError).and.include({ option: 'maxTokens', provider: undefined });
      expect((error as Error).message).to.contain('unknown option');
    });

    it('refuses options that are not an object', () => {
      for (const options of [null, 'fast', 3, ['temperature']]) {
        const error = thrown(() => validateGenerationOptions(options as unknown as GenerationOptions));
        expect(InvalidGenerationOptionError.isInstance(error), String(options)).to.equal(true);
      }
    });

    it('keeps error messages short, whatever the size of the bad value', () => {
      const huge = ['x'.repeat(1_000_000), ''];
      const error = thrown(() => validateGenerationOptions({ stopSequences: huge }));
      expect((error as Error).message.length).to.be.below(300);
      const cyclic: Record<string, unknown> = { type: 'tool' };
      cyclic['name'] = cyclic;
      const cyclicError = thrown(() => validateGenerationOptions({ toolChoice: cyclic as never }));
      expect(InvalidGenerationOptionError.isInstance(cyclicError)).to.equal(true);
    });
  });

  describe('merging', () => {
    it('per-call values win field by field; unset and undefined fields keep the base; the base is not changed', () => {
      const base: GenerationOptions = { temperature: 0.2, maxOutputTokens: 100, stopSequences: ['A'] };
      const merged = mergeGenerationOptions(base, { temperature: 0.9, seed: 3, ...({ maxOutputTokens: undefined } as object) });
      expect(merged).to.deep.equal({ temperature: 0.9, maxOutputTokens: 100, stopSequences: ['A'], seed: 3 });
      expect(base).to.deep.equal({ temperature: 0.2, maxOutputTokens: 100, stopSequences: ['A'] });
      expect(mergeGenerationOptions(base, { stopSequences: [] })).to.include.deep.equal({ temperature: 0.2, maxOutputTokens: 100, stopSequences: [] });
      expect(mergeGenerationOptions(base, undefined)).to.equal(base);
    });

    it('keeps unknown fields for validation to find (a typo in one layer is not lost by merging)', () => {
      const merged = mergeGenerationOptions({ temperature: 0.1 }, { maxTokens: 5 } as GenerationOptions);
      expect(() => validateGenerationOptions(merged)).to.throw(InvalidGenerationOptionError, 'maxTokens');
    });

    it('reads a missing base (a provider that predates generation options) as empty', () => {
      expect(mergeGenerationOptions(undefined as unknown as GenerationOptions, { seed: 1 })).to.deep.equal({ seed: 1 });
    });

    it('updateGenerationOptions (what withGeneration does) checks the update and merges it', () => {
      expect(updateGenerationOptions({ temperature: 0.1, seed: 1 }, { temperature: 0.5 })).to.deep.equal({ temperature: 0.5, seed: 1 });
      expect(() => updateGenerationOptions({}, { temperature: 9 }, 'p')).to.throw(InvalidGenerationOptionError, '"temperature" (provider "p")');
    });
  });

  describe('resolveGenerationOptions', () => {
    it("merges the call's options over the provider's and checks both", () => {
      expect(resolveGenerationOptions('p', { temperature: 0.1, seed: 1 }, { temperature: 0.7 }, [])).to.deep.equal({ temperature: 0.7, seed: 1 });
      expect(resolveGenerationOptions('p', {}, undefined, [])).to.deep.equal({});
      expect(() => resolveGenerationOptions('p', {}, { topP: 2 }, [])).to.throw(InvalidGenerationOptionError, 'topP');
      expect(() => resolveGenerationOptions('p', { topP: 2 }, undefined, [])).to.throw(InvalidGenerationOptionError, 'topP');
    });

    it('refuses a toolChoice naming a tool the request does not offer, and "required" without tools', () => {
      const tools = [tool('add'), tool('mul')];
      expect(resolveGenerationOptions('p', {}, { toolChoice: { type: 'tool', name: 'mul' } }, tools).toolChoice).to.deep.equal({ type: 'tool', name: 'mul' });
      const missing = thrown(() => resolveGenerationOptions('p', { toolChoice: { type: 'tool', name: 'div' } }, undefined, tools));
      expect(missing).to.be.instanceOf(InvalidGenerationOptionError).and.include({ option: 'toolChoice', provider: 'p' });
      expect((missing as Error).message).to.contain('"div"').and.contain('"add", "mul"');
      expect(() => resolveGenerationOptions('p', {}, { toolChoice: { type: 'tool', name: 'add' } }, [])).to.throw(InvalidGenerationOptionError, 'has no tools');
      expect(() => resolveGenerationOptions('p', {}, { toolChoice: 'required' }, [])).to.throw(InvalidGenerationOptionError, 'no tools');
      expect(resolveGenerationOptions('p', {}, { toolChoice: 'none' }, []).toolChoice).to.equal('none');
      // a per-call choice replaces the provider's (which named a tool this call does not offer)
      expect(resolveGenerationOptions('p', { toolChoice: { type: 'tool', name: 'div' } }, { toolChoice: 'auto' }, tools).toolChoice).to.equal('auto');
    });
  });

  describe('errors', () => {
    it('UnsupportedGenerationOptionError names the provider and the option, and says why', () => {
      const error = new UnsupportedGenerationOptionError('kimi', 'seed');
      expect(error.message).to.equal('Provider "kimi" does not support the generation option "seed".');
      expect(error).to.include({ provider: 'kimi', option: 'seed', name: 'UnsupportedGenerationOptionError' });
      expect(new UnsupportedGenerationOptionError('openai', 'stopSequences', 'at most 4 sequences, got 5').message).to.equal(
        'Provider "openai" does not support the generation option "stopSequences": at most 4 sequences, got 5.',
      );
    });

    it('both are ChatProviderErrors, recognised across package copies, and never retried', () => {
      const unsupported = new UnsupportedGenerationOptionError('p', 'seed');
      const invalid = new InvalidGenerationOptionError('temperature', 'bad');
      for (const error of [unsupported, invalid]) {
        expect(ChatProviderError.isInstance(error)).to.equal(true);
        expect(isRetryableError(error)).to.equal(false);
      }
      expect(UnsupportedGenerationOptionError.isInstance(invalid)).to.equal(false);
      expect(InvalidGenerationOptionError.isInstance(unsupported)).to.equal(false);
      const foreign = new Error('from another copy');
      Object.defineProperty(foreign, Symbol.for('kosong.error.UnsupportedGenerationOptionError'), { value: true });
      expect(UnsupportedGenerationOptionError.isInstance(foreign)).to.equal(true);
      expect(UnsupportedGenerationOptionError.isInstance({})).to.equal(false);
    });

    it('rejectUnsupportedGenerationOptions throws for the first unsupported option that is set, and only then', () => {
      expect(() => rejectUnsupportedGenerationOptions('p', { temperature: 1 }, ['seed', 'parallelToolCalls'])).to.not.throw();
      const error = thrown(() => rejectUnsupportedGenerationOptions('p', { temperature: 1, parallelToolCalls: false }, ['seed', 'parallelToolCalls']));
      expect(error).to.be.instanceOf(UnsupportedGenerationOptionError).and.include({ option: 'parallelToolCalls', provider: 'p' });
    });
  });

  it('GENERATION_OPTION_NAMES lists every option once', () => {
    expect(GENERATION_OPTION_NAMES).to.have.members(['maxOutputTokens', 'temperature', 'topP', 'stopSequences', 'seed', 'toolChoice', 'parallelToolCalls']);
    expect(Object.isFrozen(GENERATION_OPTION_NAMES)).to.equal(true);
  });
});
