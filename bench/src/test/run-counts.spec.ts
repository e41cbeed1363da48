import { expect } from 'chai';

import { runCounts } from '../run-counts.js';
import { findSuite } from '../suites/index.js';

describe('bench: runs per process', () => {
  it('the setting, raised to a variant’s floors and cut to its caps', () => {
    expect(runCounts({}, { runs: 3, warmup: 1 })).to.deep.equal({ runs: 3, warmup: 1 });
    expect(runCounts({ maxRuns: { warmup: 1, timed: 2 } }, { runs: 3, warmup: 1 })).to.deep.equal({ runs: 2, warmup: 1 });
    expect(runCounts({ minRuns: { warmup: 4, timed: 5 } }, { runs: 3, warmup: 1 })).to.deep.equal({ runs: 5, warmup: 4 });
    expect(runCounts({ minRuns: { warmup: 4, timed: 5 } }, { runs: 9, warmup: 6 })).to.deep.equal({ runs: 9, warmup: 6 }, 'a floor never lowers');
    expect(runCounts({ minRuns: { warmup: 4, timed: 5 }, maxRuns: { warmup: 4, timed: 5 } }, { runs: 20, warmup: 0 })).to.deep.equal({ runs: 5, warmup: 4 });
  });

  it('ai-sdk: the stream variants run 4 warm-up + 5 timed runs per process, streamText at most 1 + 2', () => {
    const suite = findSuite('ai-sdk');
    const counts = Object.fromEntries(suite.variants.map((v) => [v.name, runCounts(v, { runs: 3, warmup: 1 })]));
    expect(counts).to.deep.equal({
      'do-stream': { runs: 5, warmup: 4 },
      bridge: { runs: 5, warmup: 4 },
      'bridge-step': { runs: 5, warmup: 4 },
      'stream-text': { runs: 2, warmup: 1 },
    });
  });
});
