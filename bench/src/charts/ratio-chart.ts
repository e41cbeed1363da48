/**
 * The chart of most suites: one horizontal bar per variant, its median paired ratio to the variant it
 * is compared with, a whisker over the quartiles of those ratios, the 1× line, and each ratio target
 * as a tick on its row. Comparisons and targets against another variant than the bar's baseline get
 * rows of their own (`a / b`). Ratios beyond the scale are clipped and labelled.
 *
 * @module
 */
import { median, pairedRatios, quantile } from '../stats.js';
import type { SuiteSummary } from '../summary.js';
import { element, svgDocument, text } from './svg.js';

/** One bar of the chart. */
interface Bar {
  readonly label: string;
  readonly value: number;
  readonly p25: number;
  readonly p75: number;
  /** Target ratio on this row, if any. */
  readonly target: number | undefined;
  readonly baseline: boolean;
}

const WIDTH = 820;
const LABEL_WIDTH = 230;
const RIGHT = 110;
const ROW = 26;
const TOP = 58;
const BOTTOM = 44;
/** Bars longer than this many times the scale's natural end are clipped. */
const CLIP_ABOVE = 20;

/** The bars of a summarised suite, in variant order, then extra comparison rows. */
export function ratioBars(summary: SuiteSummary): Bar[] {
  const bars: Bar[] = [];
  const ratioTargets = (summary.suite.targets ?? []).flatMap((target) => ('maxRatio' in target ? [target] : []));
  for (const v of summary.variants) {
    const target = ratioTargets.find((t) => t.variant === v.entry.name && t.baseline === v.baseline);
    bars.push(
      v.paired === undefined
        ? { label: `${v.entry.name} (baseline)`, value: 1, p25: 1, p75: 1, target: undefined, baseline: true }
        : { label: `${v.entry.name} / ${v.baseline}`, value: v.paired.median, p25: v.paired.p25, p75: v.paired.p75, target: target?.maxRatio, baseline: false },
    );
  }
  const byName = new Map(summary.variants.map((v) => [v.entry.name, v]));
  const extra = new Map<string, number | undefined>();
  for (const c of summary.comparisons) if (byName.get(c.a)?.baseline !== c.b) extra.set(`${c.a}\u0000${c.b}`, undefined);
  for (const t of ratioTargets) if (byName.get(t.variant)?.baseline !== t.baseline) extra.set(`${t.variant}\u0000${t.baseline}`, t.maxRatio);
  for (const [key, target] of extra) {
    const [a, b] = key.split('\u0000') as [string, string];
    const ratios = pairedOf(summary, a, b);
    bars.push({ label: `${a} / ${b}`, value: median(ratios), p25: quantile(ratios, 0.25), p75: quantile(ratios, 0.75), target, baseline: false });
  }
  return bars;
}

function pairedOf(summary: SuiteSummary, a: string, b: string): number[] {
  const msOf = (name: string) => summary.variants.find((v) => v.entry.name === name)?.roundMs ?? [];
  return pairedRatios(msOf(a), msOf(b));
}

/** The SVG of a summarised suite's ratio bars. */
export function ratioChart(summary: SuiteSummary, subtitle: string): string {
  const bars = ratioBars(summary);
  const natural = Math.max(1.5, ...bars.filter((b) => b.p75 <= CLIP_ABOVE).flatMap((b) => [b.p75, b.target ?? 0]));
  const scaleMax = niceCeiling(natural * 1.1);
  const plotWidth = WIDTH - LABEL_WIDTH - RIGHT;
  const x = (ratio: number) => LABEL_WIDTH + (Math.min(ratio, scaleMax) / scaleMax) * plotWidth;
  const height = TOP + bars.length * ROW + BOTTOM;
  const body: string[] = [
    text(12, 22, `${summary.suite.name}: ${summary.suite.title}`, { 'font-size': 15, 'font-weight': 'bold' }),
    text(12, 40, subtitle, { fill: '#555555' }),
  ];
  const axisY = TOP + bars.length * ROW + 6;
  for (const tick of ticks(scaleMax)) {
    body.push(element('line', { x1: x(tick), y1: TOP - 4, x2: x(tick), y2: axisY, stroke: tick === 1 ? '#333333' : '#e3e3e3', 'stroke-dasharray': tick === 1 ? '4 3' : undefined }));
    body.push(text(x(tick), axisY + 14, `${formatTick(tick)}×`, { 'text-anchor': 'middle', fill: '#555555' }));
  }
  bars.forEach((bar, i) => {
    const y = TOP + i * ROW;
    const clipped = bar.value > scaleMax;
    const colour = bar.baseline ? '#b8b8b8' : bar.target === undefined ? '#4c78a8' : bar.value <= bar.target ? '#54a24b' : '#e45756';
    body.push(text(LABEL_WIDTH - 8, y + 16, bar.label, { 'text-anchor': 'end' }));
    body.push(element('rect', { x: LABEL_WIDTH, y: y + 5, width: x(bar.value) - LABEL_WIDTH, height: ROW - 10, fill: colour }));
    if (!bar.baseline) {
      body.push(element('line', { x1: x(bar.p25), y1: y + ROW / 2, x2: x(bar.p75), y2: y + ROW / 2, stroke: '#222222', 'stroke-width': 1.5 }));
    }
    if (bar.target !== undefined) {
      body.push(element('line', { x1: x(bar.target), y1: y + 1, x2: x(bar.target), y2: y + ROW - 1, stroke: '#222222', 'stroke-width': 2.5 }));
    }
    const label = `${bar.value >= 100 ? bar.value.toFixed(0) : bar.value.toFixed(2)}×${clipped ? ' →' : ''}${bar.target === undefined ? '' : ` (target ≤ ${bar.target}×)`}`;
    body.push(text(Math.min(x(Math.max(bar.value, bar.p75)), LABEL_WIDTH + plotWidth) + 6, y + 16, label));
  });
  body.push(
    text(12, height - 10, 'bar: median of the per-round paired ratios; whisker: their quartiles; thick tick: the target; green met, red not met, blue no target', {
      fill: '#555555',
      'font-size': 11,
    }),
  );
  return svgDocument(WIDTH, height, `${summary.suite.name} (${subtitle})`, body);
}

function niceCeiling(value: number): number {
  const step = value <= 2 ? 0.25 : value <= 5 ? 0.5 : value <= 10 ? 1 : value <= 20 ? 2 : 5;
  return Math.ceil(value / step) * step;
}

function ticks(max: number): number[] {
  const step = max <= 2 ? 0.25 : max <= 5 ? 0.5 : max <= 10 ? 1 : max <= 20 ? 2 : 5;
  const out: number[] = [];
  for (let t = 0; t <= max + 1e-9; t += step) out.push(Math.round(t * 100) / 100);
  return out;
}

function formatTick(tick: number): string {
  return Number.isInteger(tick) ? String(tick) : tick.toFixed(2).replace(/0$/, '');
}
