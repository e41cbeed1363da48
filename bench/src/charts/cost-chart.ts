/**
 * The chart of a growth suite: cost (median ms) against work (e.g. text deltas), both on log scales,
 * one line per series (a variant at one setting, e.g. `kosong, 100 tools`). A line parallel to the
 * floor's grows the same way; a steeper one grows faster than the work.
 *
 * @module
 */
import type { SuiteSummary } from '../summary.js';
import { element, svgDocument, text } from './svg.js';

const WIDTH = 820;
const HEIGHT = 520;
const LEFT = 70;
const RIGHT = 250;
const TOP = 58;
const BOTTOM = 60;
const COLOURS = ['#4c78a8', '#f58518', '#54a24b', '#e45756', '#72b7b2', '#b279a2', '#9d755d', '#bab0ac', '#eeca3b', '#ff9da6'];
const DASHES = [undefined, '6 3', '2 3', '8 3 2 3'];

interface Point {
  readonly work: number;
  readonly ms: number;
}

/**
 * The SVG of a suite whose variants carry a `plot`. Series are coloured by their first word (the
 * variant kind, e.g. `bare`) and dashed by the rest (e.g. the tool count), in the order they appear.
 */
export function costChart(summary: SuiteSummary, subtitle: string, workLabel: string): string {
  const series = new Map<string, Point[]>();
  for (const v of summary.variants) {
    const plot = v.entry.plot;
    if (!plot) continue;
    series.set(plot.series, [...(series.get(plot.series) ?? []), { work: plot.work, ms: v.ms.median / (plot.stepsPerRun ?? 1) }]);
  }
  const points = [...series.values()].flat();
  if (points.length === 0) throw new Error(`${summary.suite.name}: no variant has a plot`);
  const [workMin, workMax] = decades(points.map((p) => p.work));
  const [msMin, msMax] = decades(points.map((p) => p.ms));
  const plotWidth = WIDTH - LEFT - RIGHT;
  const plotHeight = HEIGHT - TOP - BOTTOM;
  const x = (work: number) => LEFT + ((Math.log10(work) - workMin) / (workMax - workMin)) * plotWidth;
  const y = (ms: number) => TOP + plotHeight - ((Math.log10(ms) - msMin) / (msMax - msMin)) * plotHeight;

  const body: string[] = [
    text(12, 22, `${summary.suite.name}: ${summary.suite.title}`, { 'font-size': 15, 'font-weight': 'bold' }),
    text(12, 40, subtitle, { fill: '#555555' }),
  ];
  for (let d = workMin; d <= workMax; d++) {
    body.push(element('line', { x1: x(10 ** d), y1: TOP, x2: x(10 ** d), y2: TOP + plotHeight, stroke: '#e3e3e3' }));
    body.push(text(x(10 ** d), TOP + plotHeight + 16, formatPower(d), { 'text-anchor': 'middle', fill: '#555555' }));
  }
  for (let d = msMin; d <= msMax; d++) {
    body.push(element('line', { x1: LEFT, y1: y(10 ** d), x2: LEFT + plotWidth, y2: y(10 ** d), stroke: '#e3e3e3' }));
    body.push(text(LEFT - 6, y(10 ** d) + 4, `${formatPower(d)} ms`, { 'text-anchor': 'end', fill: '#555555' }));
  }
  body.push(text(LEFT + plotWidth / 2, HEIGHT - 24, `${workLabel} (log scale)`, { 'text-anchor': 'middle' }));

  const kinds = [...new Set([...series.keys()].map(kindOf))];
  const settings = [...new Set([...series.keys()].map(settingOf))];
  [...series.entries()].forEach(([name, line], i) => {
    const colour = COLOURS[kinds.indexOf(kindOf(name)) % COLOURS.length]!;
    const dash = DASHES[settings.indexOf(settingOf(name)) % DASHES.length];
    const sorted = [...line].sort((a, b) => a.work - b.work);
    body.push(
      element('polyline', {
        points: sorted.map((p) => `${x(p.work).toFixed(1)},${y(p.ms).toFixed(1)}`).join(' '),
        fill: 'none',
        stroke: colour,
        'stroke-width': 2,
        'stroke-dasharray': dash,
      }),
    );
    for (const p of sorted) body.push(element('circle', { cx: x(p.work), cy: y(p.ms), r: 3, fill: colour }));
    const legendY = TOP + 8 + i * 18;
    body.push(element('line', { x1: WIDTH - RIGHT + 16, y1: legendY, x2: WIDTH - RIGHT + 44, y2: legendY, stroke: colour, 'stroke-width': 2, 'stroke-dasharray': dash }));
    body.push(text(WIDTH - RIGHT + 50, legendY + 4, name));
  });
  body.push(text(12, HEIGHT - 6, 'each point: median wall ms of one step (a run divided by its steps), median across processes', { fill: '#555555', 'font-size': 11 }));
  return svgDocument(WIDTH, HEIGHT, `${summary.suite.name} (${subtitle})`, body);
}

/** The whole decades (log10) that cover every value. */
function decades(values: readonly number[]): [number, number] {
  const low = Math.floor(Math.log10(Math.min(...values)));
  const high = Math.ceil(Math.log10(Math.max(...values)));
  return [low, Math.max(high, low + 1)];
}

function formatPower(exponent: number): string {
  const value = 10 ** exponent;
  return value >= 1 ? value.toLocaleString('en') : String(value);
}

function kindOf(series: string): string {
  return series.split(',')[0]!.trim();
}

function settingOf(series: string): string {
  return series.split(',').slice(1).join(',').trim();
}
