/**
 * Variants of the `growth` suite: one cell of the grid (a response of some text deltas and some tool
 * calls) through the bare stream, `step()` or the AI SDK, each timed run repeating the step enough
 * times to be measurable ({@link stepsPerRun}).
 *
 * @module
 */
import { step } from '@kosong/core';
import type { PreparedVariant } from '../../harness.js';
import { loadPeerVariant } from '../../peers.js';
import { repeated } from '../../repeated.js';
import { prepareBare } from '../step/bare.js';
import { prepareStep } from '../step/kosong.js';
import type { ResponseShape } from '../step/workload.js';

/** What runs a cell: the floor, kosong's `step()`, or the AI SDK's `streamText`. */
export type GrowthKind = 'bare' | 'kosong' | 'ai-sdk';

/** Steps per timed run: enough for about 20,000 text deltas per run (one step from 20,000 deltas up). */
export function stepsPerRun(shape: ResponseShape): number {
  return Math.max(1, Math.round(20_000 / shape.textDeltas));
}

/** The variant of one cell. */
export async function prepareCell(kind: GrowthKind, shape: ResponseShape): Promise<PreparedVariant> {
  const steps = stepsPerRun(shape);
  switch (kind) {
    case 'bare':
      return repeated(prepareBare(shape), steps);
    case 'kosong':
      return repeated(
        prepareStep('kosong', (provider, toolset) => () => step({ provider, systemPrompt: 'You are a benchmark.', toolset, history: [] }), shape),
        steps,
      );
    case 'ai-sdk': {
      const peer = (await loadPeerVariant('step-ai-sdk.js')) as unknown as { prepareAiSdk(shape: ResponseShape): PreparedVariant };
      return repeated(peer.prepareAiSdk(shape), steps);
    }
  }
}
