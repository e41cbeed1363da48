import { expect } from 'chai';
import sinon from 'sinon';

import { errorChainMessages, retryAfterSeconds, transportFailureKind } from '../provider-kit/index.js';

const coded = (code: string, message = code): Error => Object.assign(new Error(message), { code });

describe('transport failure facts', () => {
  it('transportFailureKind: timeouts and broken connections by code, down the cause chain', () => {
    expect(transportFailureKind(coded('UND_ERR_HEADERS_TIMEOUT'))).to.equal('timeout');
    expect(transportFailureKind(new TypeError('fetch failed', { cause: coded('ETIMEDOUT') }))).to.equal('timeout');
    expect(transportFailureKind(new TypeError('fetch failed', { cause: coded('ECONNREFUSED') }))).to.equal('connection');
    expect(transportFailureKind(new TypeError('terminated', { cause: coded('UND_ERR_SOCKET', 'other side closed') }))).to.equal('connection');
    expect(transportFailureKind(new TypeError('terminated'))).to.equal('connection');
    expect(transportFailureKind(new Error('x', { cause: new Error('y', { cause: new Error('z', { cause: coded('ECONNRESET') }) }) }))).to.equal('connection');
    expect(transportFailureKind(new TypeError('Cannot read properties of undefined'))).to.equal(undefined);
    expect(transportFailureKind(coded('ERR_SOMETHING_ELSE'))).to.equal(undefined);
    expect(transportFailureKind(new SyntaxError('Unexpected token'))).to.equal(undefined);
    expect(transportFailureKind('ECONNRESET')).to.equal(undefined);
    expect(transportFailureKind(null)).to.equal(undefined);
  });

  describe('retryAfterSeconds', () => {
    let clock: sinon.SinonFakeTimers;
    beforeEach(() => {
      clock = sinon.useFakeTimers(new Date('2026-11-30T12:00:00Z'));
    });
    afterEach(() => clock.restore());

    it('reads retry-after-ms first, then retry-after in seconds or as an HTTP date', () => {
      expect(retryAfterSeconds(new Headers({ 'retry-after-ms': '1500', 'retry-after': '9' }))).to.equal(1.5);
      expect(retryAfterSeconds(new Headers({ 'retry-after': ' 7 ' }))).to.equal(7);
      expect(retryAfterSeconds(new Headers({ 'retry-after': 'Mon, 30 Nov 2026 12:01:00 GMT' }))).to.equal(60);
      expect(retryAfterSeconds(new Headers({ 'retry-after': 'Mon, 30 Nov 2026 11:00:00 GMT' }))).to.equal(0);
      expect(retryAfterSeconds(new Headers({ 'retry-after': '-3' }))).to.equal(0);
    });

    it('is undefined without a valid header', () => {
      expect(retryAfterSeconds(new Headers())).to.equal(undefined);
      expect(retryAfterSeconds(new Headers({ 'retry-after': 'soon' }))).to.equal(undefined);
      expect(retryAfterSeconds(new Headers({ 'retry-after-ms': 'x' }))).to.equal(undefined);
      expect(retryAfterSeconds(undefined)).to.equal(undefined);
    });
  });

  it('errorChainMessages: each message once, at most `depth`, any value as text', () => {
    const error = new TypeError('fetch failed', { cause: new Error('connect ECONNREFUSED 127.0.0.1:1', { cause: new Error('connect ECONNREFUSED 127.0.0.1:1') }) });
    expect(errorChainMessages(error)).to.deep.equal(['fetch failed', 'connect ECONNREFUSED 127.0.0.1:1']);
    expect(errorChainMessages(new Error('a', { cause: new Error('b', { cause: 'c' }) }), 2)).to.deep.equal(['a', 'b']);
    expect(errorChainMessages({ status: 500 })).to.deep.equal(['{"status":500}']);
    expect(errorChainMessages(new Error(''))).to.deep.equal([]);
    const cyclic: { self?: unknown } = {};
    cyclic.self = cyclic;
    expect(errorChainMessages(cyclic)).to.deep.equal(['[object Object]']);
  });
});
