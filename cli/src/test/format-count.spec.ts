import { expect } from 'chai';
import fc from 'fast-check';
import { formatCount } from '../format-count.js';

describe('formatCount', () => {
  it('groups thousands with commas', () => {
    expect([0, 7, 999, 1_000, 12_345, 999_999, 1_000_000, 1_234_567_890].map(formatCount)).to.deep.equal([
      '0',
      '7',
      '999',
      '1,000',
      '12,345',
      '999,999',
      '1,000,000',
      '1,234,567,890',
    ]);
  });

  it("is toLocaleString('en') for every safe integer, negative ones included", () => {
    fc.assert(fc.property(fc.maxSafeInteger(), fc.integer({ min: -1e7, max: 1e7 }), (big, small) => {
      expect(formatCount(big)).to.equal(big.toLocaleString('en'));
      expect(formatCount(small)).to.equal(small.toLocaleString('en'));
    }));
  });

  it('prints what is not a safe integer as String() does', () => {
    expect([1.5, Number.NaN, Infinity, 2 ** 60].map(formatCount)).to.deep.equal(['1.5', 'NaN', 'Infinity', String(2 ** 60)]);
  });
});
