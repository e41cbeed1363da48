/**
 * What a run reports: the summary of a suite (ratios to each variant's own baseline, targets met or
 * not), its markdown section, and its SVG chart (well-formed, every variant drawn, text escaped).
 */
import { expect } from 'chai';
import { costChart } from '../charts/cost-chart.js';
import { ratioChart } from '../charts/ratio-chart.js';
import type { ChildReport, Suite } from '../harness.js';
import { renderSuite } from '../report.js';
import { summarise } from '../summary.js';

function report(variant: string, ms: number, metrics: Record<string, number> = {}): ChildReport {
  return { suite: 's', variant, runsMs: [ms], medianMs: ms, cpuMs: [ms], medianCpuMs: ms, maxRssMb: 50, gcMs: [1], medianGcMs: 1, metrics };
}

const load = () => Promise.reject(new Error('not loaded in this test'));

const suite: Suite = {
  name: 's',
  title: 'A <suite> & its "variants"',
  workload: 'nothing',
  baseline: 'bare',
  variants: [
    { name: 'bare', description: 'the floor', load },
    { name: 'fast', description: 'close to the floor', load },
    { name: 'slow', description: 'far from it', load },
    { name: 'slow+x', description: 'slow, with x', baseline: 'slow', load },
  ],
  metrics: [{ key: 'heapKb', label: 'heap (KB)', decimals: 1 }],
  comparisons: [['fast', 'slow']],
  targets: [
    { variant: 'fast', baseline: 'bare', maxRatio: 1.3 },
    { variant: 'slow', baseline: 'bare', maxRatio: 1.3 },
    { variant: 'slow+x', metric: 'heapKb', max: 2 },
  ],
};

const results = new Map([
  ['bare', [report('bare', 10), report('bare', 20), report('bare', 10)]],
  ['fast', [report('fast', 11), report('fast', 24), report('fast', 12)]],
  ['slow', [report('slow', 30), report('slow', 40), report('slow', 30)]],
  ['slow+x', [report('slow+x', 33, { heapKb: 2.5 }), report('slow+x', 44, { heapKb: 2.4 }), report('slow+x', 33, { heapKb: 2.6 })]],
]);

describe('bench: the report of a suite', () => {
  const summary = summarise(suite, results, 3, true);

  it('compares each variant with its own baseline, round by round', () => {
    const byName = new Map(summary.variants.map((v) => [v.entry.name, v]));
    expect(byName.get('bare')!.paired).to.equal(undefined);
    expect(byName.get('fast')!.paired!.median).to.be.closeTo(1.2, 1e-9);
    expect(byName.get('fast')!.ratioOfMedians).to.be.closeTo(12 / 10, 1e-9);
    expect(byName.get('slow+x')!.baseline).to.equal('slow');
    expect(byName.get('slow+x')!.paired!.median).to.be.closeTo(1.1, 1e-9);
    expect(byName.get('slow+x')!.metrics).to.deep.equal({ heapKb: 2.5 });
  });

  it('says which targets were met, by ratio and by metric', () => {
    expect(summary.targets.map((t) => [t.label, t.met])).to.deep.equal([
      ['fast ≤ 1.3× bare (wall, median paired ratio)', true],
      ['slow ≤ 1.3× bare (wall, median paired ratio)', false],
      ['slow+x: heap (KB) ≤ 2', false],
    ]);
    expect(summary.comparisons).to.have.length(1);
    expect(summary.comparisons[0]!.wall).to.be.closeTo(0.4, 1e-9);
  });

  it('renders a markdown section with every variant, the metric column and the verdicts', () => {
    const markdown = renderSuite(summary, () => ({ runs: 1, warmup: 0 }), 's.svg');
    for (const name of ['bare', 'fast', 'slow', 'slow+x']) expect(markdown).to.contain(`| ${name} |`);
    expect(markdown).to.contain('heap (KB)');
    expect(markdown).to.contain('target slow ≤ 1.3× bare (wall, median paired ratio): 3.00×, **not met**');
    expect(markdown).to.contain('[s.svg](s.svg)');
    expect(markdown).to.contain('Rounds: 3 (medians stable)');
  });

  it('draws ratio bars as a well-formed SVG, one row per variant plus comparisons, text escaped', () => {
    const svg = ratioChart(summary, 'node v20, 3 rounds');
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).to.equal(true);
    expect(svg.trimEnd().endsWith('</svg>')).to.equal(true);
    expect(svg).to.contain('A &lt;suite&gt; &amp; its &quot;variants&quot;');
    expect(svg).to.not.contain('<suite>');
    for (const label of ['bare (baseline)', 'fast / bare', 'slow / bare', 'slow+x / slow', 'fast / slow']) expect(svg).to.contain(`>${label}<`);
    expect(svg).to.contain('(target ≤ 1.3×)');
    expect(svg).to.not.contain('NaN');
  });

  it('draws cost against work on log scales, one line per series', () => {
    const grid: Suite = {
      ...suite,
      baseline: 'a-1k',
      chart: 'cost-vs-work',
      variants: [
        { name: 'a-1k', description: '', load, plot: { series: 'a, 0 tools', work: 1000, stepsPerRun: 10 } },
        { name: 'a-10k', description: '', load, baseline: 'a-10k', plot: { series: 'a, 0 tools', work: 10_000 } },
        { name: 'b-1k', description: '', load, baseline: 'a-1k', plot: { series: 'b, 0 tools', work: 1000, stepsPerRun: 10 } },
        { name: 'b-10k', description: '', load, baseline: 'a-10k', plot: { series: 'b, 0 tools', work: 10_000 } },
      ],
      targets: [],
      comparisons: [],
    };
    const gridResults = new Map([
      ['a-1k', [report('a-1k', 10)]],
      ['a-10k', [report('a-10k', 10)]],
      ['b-1k', [report('b-1k', 20)]],
      ['b-10k', [report('b-10k', 25)]],
    ]);
    const svg = costChart(summarise(grid, gridResults, 1, undefined), 'node v22', 'text deltas');
    expect(svg.match(/<polyline /g)).to.have.length(2);
    expect(svg.match(/<circle /g)).to.have.length(4);
    expect(svg).to.contain('>a, 0 tools<');
    expect(svg).to.contain('text deltas (log scale)');
    expect(svg).to.not.contain('NaN');
  });
});
