/**
 * How many rounds a suite runs, and the statistics of its report: quantiles, spreads, paired ratios,
 * and when the running medians count as stable.
 */
import { expect } from 'chai';
import { DEFAULT_ROUND_POLICY, fixedRounds, largestRecentMove, needsAnotherRound, trackedSeries } from '../rounds.js';
import { median, pairedRatios, quantile, spread } from '../stats.js';

describe('bench: statistics', () => {
  it('quantiles interpolate between ranks; the median of an even list is the mean of the middle two', () => {
    expect(median([3, 1, 2])).to.equal(2);
    expect(median([4, 1, 3, 2])).to.equal(2.5);
    expect(quantile([10, 20, 30, 40, 50], 0.25)).to.equal(20);
    expect(quantile([1, 2], 0.25)).to.equal(1.25);
    expect(quantile([7], 0.9)).to.equal(7);
    expect(spread([5, 1, 4, 2, 3])).to.deep.equal({ median: 3, p25: 2, p75: 4, min: 1, max: 5 });
  });

  it('refuses an empty list and a quantile outside [0, 1]', () => {
    expect(() => median([])).to.throw(/empty/);
    expect(() => quantile([1], 1.5)).to.throw(/within/);
    expect(() => quantile([1], Number.NaN)).to.throw(/within/);
  });

  it('pairs each round with the same round of the baseline, so drift between rounds cancels', () => {
    // The machine got twice as slow in round 2: both variants slowed, their ratio did not.
    expect(pairedRatios([12, 24, 12], [10, 20, 10])).to.deep.equal([1.2, 1.2, 1.2]);
    expect(() => pairedRatios([1, 2], [1])).to.throw(/2 values and 1 baselines/);
    expect(() => pairedRatios([1], [0])).to.throw(/baseline of 0/);
  });
});

describe('bench: rounds until stable', () => {
  const policy = { min: 3, max: 6, tolerance: 0.02, window: 3 };

  it('always runs the minimum, never more than the maximum', () => {
    const steady = [[1, 1, 1]];
    expect(needsAnotherRound(0, [[]], policy)).to.equal(true);
    expect(needsAnotherRound(2, steady, policy)).to.equal(true);
    expect(needsAnotherRound(3, steady, policy)).to.equal(false);
    const wild = [[1, 3, 1, 3, 1, 3]];
    expect(needsAnotherRound(5, [wild[0]!.slice(0, 5)], policy)).to.equal(true);
    expect(needsAnotherRound(6, wild, policy)).to.equal(false);
  });

  it('goes on while a running median still moves more than the tolerance over the window', () => {
    expect(largestRecentMove([[1.0, 1.0, 1.0, 1.01]], 3)).to.be.below(0.02);
    expect(needsAnotherRound(4, [[1.0, 1.0, 1.0, 1.01]], policy)).to.equal(false);
    expect(largestRecentMove([[1.0, 1.5, 2.0, 2.5]], 3)).to.be.above(0.02);
    expect(needsAnotherRound(4, [[1.0, 1.5, 2.0, 2.5]], policy)).to.equal(true);
    // One steady series does not make the suite stable while another still moves.
    expect(needsAnotherRound(4, [[1, 1, 1, 1], [1, 2, 3, 4]], policy)).to.equal(true);
    expect(largestRecentMove([[1, 1]], 3)).to.equal(Infinity);
  });

  it('a fixed count runs exactly that many rounds', () => {
    expect(needsAnotherRound(4, [[1, 2, 3, 4]], fixedRounds(5))).to.equal(true);
    expect(needsAnotherRound(5, [[1, 9, 1, 9, 1]], fixedRounds(5))).to.equal(false);
    expect(DEFAULT_ROUND_POLICY.min).to.be.at.most(DEFAULT_ROUND_POLICY.max);
  });

  it('tracks the paired ratio of each compared variant, or each wall time when nothing is compared', () => {
    const ms = new Map([
      ['bare', [10, 20]],
      ['kosong', [12, 26]],
      ['other', [30, 30]],
    ]);
    const tracked = trackedSeries(ms, (v) => (v === 'bare' ? undefined : 'bare'));
    expect(tracked).to.deep.equal([
      [1.2, 1.3],
      [3, 1.5],
    ]);
    expect(trackedSeries(new Map([['only', [5, 6]]]), () => undefined)).to.deep.equal([[5, 6]]);
  });
});
