import { expect } from 'chai';

import {
  addUsage,
  APIConnectionError,
  APIEmptyResponseError,
  APIStatusError,
  APITimeoutError,
  ChatProviderError,
  inputTokens,
  tokenUsage,
  totalTokens,
} from '../index.js';
import type * as ErrorsModule from '../provider/errors.js';

type ErrorClass = (abstract new (...args: never[]) => Error) & {
  isInstance(error: unknown): boolean;
};

/** One instance of each class, built with the given message and options. */
function instances(message: string, options?: ErrorOptions): Record<string, Error> {
  return {
    ChatProviderError: new ChatProviderError(message, options),
    APIConnectionError: new APIConnectionError(message, options),
    APITimeoutError: new APITimeoutError(message, options),
    APIStatusError: new APIStatusError(500, message, options),
    APIEmptyResponseError: new APIEmptyResponseError(message, options),
  };
}

const classes: Record<string, ErrorClass> = {
  ChatProviderError,
  APIConnectionError,
  APITimeoutError,
  APIStatusError,
  APIEmptyResponseError,
};

/** The global symbol a class marks its instances with (the cross-copy protocol). */
const marker = (name: string): symbol => Symbol.for(`kosong.error.${name}`);

/** An object a second copy of the package would build: carries the markers, but is no instance of our classes. */
function foreignError(message: string, ...names: string[]): Error {
  const error = new Error(message);
  for (const name of names) Object.defineProperty(error, marker(name), { value: true, enumerable: false });
  return error;
}

describe('provider', () => {
  describe('error hierarchy', () => {
    // Which `isInstance` accepts which instance: each class accepts itself and its subclasses only.
    const accepts: Record<string, readonly string[]> = {
      ChatProviderError: ['ChatProviderError', 'APIConnectionError', 'APITimeoutError', 'APIStatusError', 'APIEmptyResponseError'],
      APIConnectionError: ['APIConnectionError'],
      APITimeoutError: ['APITimeoutError'],
      APIStatusError: ['APIStatusError'],
      APIEmptyResponseError: ['APIEmptyResponseError'],
    };

    for (const [className, cls] of Object.entries(classes)) {
      describe(`${className}.isInstance`, () => {
        for (const [instanceName, instance] of Object.entries(instances('boom'))) {
          const expected = accepts[className]!.includes(instanceName);
          it(`is ${expected} for an instance of ${instanceName}`, () => {
            expect(cls.isInstance(instance)).to.equal(expected);
          });
        }

        it('is false for a plain Error, a TypeError and non-errors', () => {
          for (const value of [new Error('boom'), new TypeError('boom'), null, undefined, 'ChatProviderError', 42, {}, [], () => 0]) {
            expect(cls.isInstance(value), String(value)).to.equal(false);
          }
        });

        it('is false when the marker is present but not `true`', () => {
          for (const value of [1, 'true', {}, false]) {
            const fake = { [marker(className)]: value };
            expect(cls.isInstance(fake), String(value)).to.equal(false);
          }
        });
      });
    }

    it('agrees with instanceof for instances of this copy', () => {
      const all = Object.values(instances('boom'));
      for (const [className, cls] of Object.entries(classes)) {
        for (const error of all) expect(cls.isInstance(error), `${className} / ${error.name}`).to.equal(error instanceof cls);
      }
    });

    it('gives every error its class name, message, cause and a stack', () => {
      const cause = new Error('socket hang up');
      for (const [className, error] of Object.entries(instances('request failed', { cause }))) {
        expect(error.name, className).to.equal(className);
        expect(error.message, className).to.equal('request failed');
        expect(error.cause, className).to.equal(cause);
        expect(error).to.be.instanceOf(Error);
        expect(error).to.be.instanceOf(ChatProviderError);
        expect(String(error), className).to.equal(`${className}: request failed`);
        expect(error.stack, className).to.be.a('string').that.includes('request failed');
      }
    });

    it('leaves cause unset when none is given', () => {
      for (const error of Object.values(instances('no cause'))) {
        expect(Object.prototype.hasOwnProperty.call(error, 'cause'), error.name).to.equal(false);
        expect(error.cause).to.equal(undefined);
      }
    });

    it('names a user subclass after itself and still recognises it as its base', () => {
      class RateLimitError extends APIStatusError {}
      const error = new RateLimitError(429, 'slow down');
      expect(error.name).to.equal('RateLimitError');
      expect(APIStatusError.isInstance(error)).to.equal(true);
      expect(ChatProviderError.isInstance(error)).to.equal(true);
      expect(APIConnectionError.isInstance(error)).to.equal(false);
    });

    it('does not expose the markers as enumerable properties', () => {
      const error = new APIStatusError(500, 'x');
      expect(Object.getOwnPropertySymbols(error)).to.have.members([marker('ChatProviderError'), marker('APIStatusError')]);
      const enumerableSymbols = Object.getOwnPropertySymbols(error).filter((s) => Object.prototype.propertyIsEnumerable.call(error, s));
      expect(enumerableSymbols).to.deep.equal([]);
      expect(Object.getOwnPropertySymbols({ ...error })).to.deep.equal([]);
    });

    describe('APIStatusError', () => {
      it('carries statusCode, requestId, traceId and retryAfterSeconds', () => {
        const cause = new Error('429');
        const error = new APIStatusError(429, 'Too Many Requests', {
          requestId: 'req-1',
          traceId: 'trace-1',
          retryAfterSeconds: 7.5,
          cause,
        });
        expect(error.statusCode).to.equal(429);
        expect(error.message).to.equal('Too Many Requests');
        expect(error.requestId).to.equal('req-1');
        expect(error.traceId).to.equal('trace-1');
        expect(error.retryAfterSeconds).to.equal(7.5);
        expect(error.cause).to.equal(cause);
        expect(error.name).to.equal('APIStatusError');
      });

      it('leaves the optional facts undefined when not given', () => {
        const error = new APIStatusError(503, 'Service Unavailable');
        expect(error.statusCode).to.equal(503);
        expect(error.message).to.equal('Service Unavailable');
        expect(error.requestId).to.equal(undefined);
        expect(error.traceId).to.equal(undefined);
        expect(error.retryAfterSeconds).to.equal(undefined);
        expect(error.cause).to.equal(undefined);
      });

      it('keeps a retryAfterSeconds of 0', () => {
        expect(new APIStatusError(429, 'x', { retryAfterSeconds: 0 }).retryAfterSeconds).to.equal(0);
      });
    });

    describe('across duplicated copies of the package', () => {
      it('marks instances with the global Symbol.for("kosong.error.<Class>") markers of the class and its bases', () => {
        const error = new APITimeoutError('slow');
        const record = error as unknown as Record<symbol, unknown>;
        expect(record[marker('APITimeoutError')]).to.equal(true);
        expect(record[marker('ChatProviderError')]).to.equal(true);
        expect(record[marker('APIConnectionError')]).to.equal(undefined);
        expect(record[marker('APIStatusError')]).to.equal(undefined);
      });

      it('recognises an object of another copy that carries the markers (where instanceof fails)', () => {
        const foreign = foreignError('from another copy', 'ChatProviderError', 'APIStatusError');
        expect(foreign).to.not.be.instanceOf(ChatProviderError);
        expect(foreign).to.not.be.instanceOf(APIStatusError);
        expect(ChatProviderError.isInstance(foreign)).to.equal(true);
        expect(APIStatusError.isInstance(foreign)).to.equal(true);
        expect(APITimeoutError.isInstance(foreign)).to.equal(false);
        expect(APIConnectionError.isInstance(foreign)).to.equal(false);
        expect(APIEmptyResponseError.isInstance(foreign)).to.equal(false);
      });

      it('recognises a marked object that is not an Error at all', () => {
        const foreign = { [marker('APIConnectionError')]: true };
        expect(APIConnectionError.isInstance(foreign)).to.equal(true);
        expect(ChatProviderError.isInstance(foreign)).to.equal(false);
      });

      it('recognises the instances of a second module instance of errors.js, and it recognises ours', async () => {
        // A query string makes Node load a second, independent module instance: distinct classes, as with a
        // duplicated package in node_modules.
        const url = new URL('../provider/errors.js?second-copy', import.meta.url).href;
        const copy = (await import(url)) as typeof ErrorsModule;
        expect(copy.APIStatusError).to.not.equal(APIStatusError);

        const theirs = new copy.APIStatusError(502, 'Bad Gateway', { requestId: 'r' });
        expect(theirs).to.not.be.instanceOf(APIStatusError);
        expect(theirs).to.not.be.instanceOf(ChatProviderError);
        expect(APIStatusError.isInstance(theirs)).to.equal(true);
        expect(ChatProviderError.isInstance(theirs)).to.equal(true);
        expect(APITimeoutError.isInstance(theirs)).to.equal(false);

        const ours = new APITimeoutError('slow');
        expect(copy.APITimeoutError.isInstance(ours)).to.equal(true);
        expect(copy.ChatProviderError.isInstance(ours)).to.equal(true);
        expect(copy.APIStatusError.isInstance(ours)).to.equal(false);
      });
    });
  });

  describe('TokenUsage', () => {
    it('tokenUsage() defaults every count to 0', () => {
      expect(tokenUsage()).to.deep.equal({ inputOther: 0, output: 0, inputCacheRead: 0, inputCacheCreation: 0 });
      expect(tokenUsage({})).to.deep.equal({ inputOther: 0, output: 0, inputCacheRead: 0, inputCacheCreation: 0 });
    });

    it('tokenUsage() keeps the given counts and defaults only the omitted ones', () => {
      expect(tokenUsage({ inputOther: 10, output: 2 })).to.deep.equal({
        inputOther: 10,
        output: 2,
        inputCacheRead: 0,
        inputCacheCreation: 0,
      });
      expect(tokenUsage({ inputCacheRead: 3, inputCacheCreation: 4 })).to.deep.equal({
        inputOther: 0,
        output: 0,
        inputCacheRead: 3,
        inputCacheCreation: 4,
      });
    });

    it('inputTokens = inputOther + inputCacheRead + inputCacheCreation', () => {
      expect(inputTokens(tokenUsage({ inputOther: 10, output: 2, inputCacheRead: 3 }))).to.equal(13);
      expect(inputTokens(tokenUsage({ inputOther: 10, output: 2, inputCacheRead: 3, inputCacheCreation: 5 }))).to.equal(18);
      expect(inputTokens(tokenUsage({ output: 100 }))).to.equal(0);
    });

    it('totalTokens = input + output', () => {
      expect(totalTokens(tokenUsage({ inputOther: 10, output: 2, inputCacheRead: 3 }))).to.equal(15);
      expect(totalTokens(tokenUsage({ inputOther: 10, output: 2, inputCacheRead: 3, inputCacheCreation: 5 }))).to.equal(20);
      expect(totalTokens(tokenUsage({ output: 11 }))).to.equal(11);
      expect(totalTokens(tokenUsage())).to.equal(0);
    });

    it('addUsage sums every count and leaves its arguments unchanged', () => {
      const a = tokenUsage({ inputOther: 10, output: 2, inputCacheRead: 3 });
      const b = tokenUsage({ inputOther: 4, output: 1, inputCacheRead: 2, inputCacheCreation: 8 });
      const sum = addUsage(a, b);
      expect(sum).to.deep.equal({ inputOther: 14, output: 3, inputCacheRead: 5, inputCacheCreation: 8 });
      expect(inputTokens(sum)).to.equal(inputTokens(a) + inputTokens(b));
      expect(totalTokens(sum)).to.equal(totalTokens(a) + totalTokens(b));
      expect(a).to.deep.equal({ inputOther: 10, output: 2, inputCacheRead: 3, inputCacheCreation: 0 });
      expect(b).to.deep.equal({ inputOther: 4, output: 1, inputCacheRead: 2, inputCacheCreation: 8 });
      expect(addUsage(a, tokenUsage())).to.deep.equal(a);
    });
  });
});
