/**
 * The `growth` suite: how the cost of a step grows with its size — 1k, 10k and 100k text deltas, each
 * with 0, 10, 100 and 1000 tool calls — for the floor, kosong and the AI SDK. Each kosong and AI SDK
 * cell is compared with the floor of the same cell; the chart plots cost against text deltas.
 *
 * @module
 */
import type { Suite, VariantEntry } from '../../harness.js';
import type { ResponseShape } from '../step/workload.js';
import { stepsPerRun, type GrowthKind } from './variants.js';

export const GROWTH_DELTAS = [1_000, 10_000, 100_000] as const;
export const GROWTH_TOOLS = [0, 10, 100, 1_000] as const;

const KINDS: readonly { readonly kind: GrowthKind; readonly description: string }[] = [
  { kind: 'bare', description: '`for await` over the MockChatProvider stream, counting parts' },
  { kind: 'kosong', description: '`step()` + `toolResults()`' },
  { kind: 'ai-sdk', description: '`streamText` (ai 7, MockLanguageModelV4), full stream consumed once' },
];

function short(n: number): string {
  return n >= 1000 ? `${n / 1000}k` : String(n);
}

/** The name of a cell's variant, e.g. `kosong-10k-100t`. */
export function cellName(kind: GrowthKind, shape: ResponseShape): string {
  return `${kind}-${short(shape.textDeltas)}-${shape.toolCalls}t`;
}

function entries(): VariantEntry[] {
  const out: VariantEntry[] = [];
  for (const toolCalls of GROWTH_TOOLS) {
    for (const textDeltas of GROWTH_DELTAS) {
      const shape: ResponseShape = { textDeltas, toolCalls };
      const steps = stepsPerRun(shape);
      for (const { kind, description } of KINDS) {
        out.push({
          name: cellName(kind, shape),
          description: `${description}; ${steps} step${steps === 1 ? '' : 's'} per run`,
          // A floor cell is its own baseline; the others are compared with the floor of their cell.
          baseline: cellName('bare', shape),
          load: async () => ({ prepare: async () => (await import('./variants.js')).prepareCell(kind, shape) }),
          fromPeers: kind === 'ai-sdk',
          // The AI SDK takes seconds per 100k deltas on Node 20: no warm-up, one timed run per process.
          ...(kind === 'ai-sdk' ? { maxRuns: { warmup: 0, timed: 1 } } : {}),
          plot: { series: `${kind}, ${toolCalls} tools`, work: textDeltas, stepsPerRun: steps },
        });
      }
    }
  }
  return out;
}

export const growthSuite: Suite = {
  name: 'growth',
  title: 'Growth: cost of a step against its size',
  workload:
    `one response of ${GROWTH_DELTAS.map(short).join(' / ')} text deltas with ${GROWTH_TOOLS.join(' / ')} tool calls (deltas spread evenly around the calls, ` +
    'arguments in 3 streamed fragments, the tool resolves at once); each timed run repeats the step until about 20,000 deltas were streamed ' +
    '(20 steps of 1k, 2 of 10k, 1 of 100k), and the chart divides by the steps per run',
  baseline: 'bare-1k-0t',
  variants: entries(),
  chart: 'cost-vs-work',
  workUnit: 'text deltas per step',
  rounds: { min: 5, max: 9 },
  targets: GROWTH_TOOLS.map((toolCalls) => ({ variant: cellName('kosong', { textDeltas: 100_000, toolCalls }), baseline: cellName('bare', { textDeltas: 100_000, toolCalls }), maxRatio: 1.3 })),
};
