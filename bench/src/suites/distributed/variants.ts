/**
 * Variants of the `distributed` suite. Setup (Redis, worker processes, connections, warm caches) is
 * untimed; `run` is one batch of calls or turns.
 *
 * @module
 */
import type { ToolCall } from '@kosong/core';
import { RemoteToolset, TurnQueue } from '@kosong/bullmq';
import { planInput } from '@kosong/bullmq/testing';
import type { PreparedVariant } from '../../harness.js';
import { benchToolset } from './echo-toolset.js';
import { startFleet } from './fleet.js';

const CALLS = 200;
const TURNS = 48;
const SESSIONS = 16;
/** Each step streams 5 parts 10 ms apart: a model's latency, as a real one has (the turns then wait on I/O, not CPU). */
const PART_DELAY_MS = 10;
let batch = 0;

const echoCall = (id: string): ToolCall => ({ type: 'function', id, function: { name: 'echo', arguments: '{"x":1}' } });

/** Runs `CALLS` sequential calls on a toolset; resolves with how many came back right. */
async function sequentialCalls(handle: (call: ToolCall, stepId: string, index: number) => Promise<unknown> | unknown): Promise<number> {
  const run = batch++;
  let ok = 0;
  for (let i = 0; i < CALLS; i++) {
    const result = (await handle(echoCall(`c${i}`), `b${run}`, i)) as { returnValue: { output: unknown } };
    if (result.returnValue.output === '{"x":1}') ok++;
  }
  return ok;
}

const checkCalls = (ok: number): void => {
  if (ok !== CALLS) throw new Error(`expected ${CALLS} echoed results, got ${ok}`);
};

export function prepareLocalCalls(): PreparedVariant<number> {
  const toolset = benchToolset();
  const signal = new AbortController().signal;
  return {
    run: () => sequentialCalls((call, stepId, index) => toolset.handle(call, { signal, toolCall: call, stepId, index })),
    verify: checkCalls,
  };
}

export async function prepareRemoteCalls(): Promise<PreparedVariant<number>> {
  const fleet = await startFleet(1);
  const toolset = await RemoteToolset.connect({ connection: fleet.redis.url, name: 'bench', tenant: 'bench', prefix: fleet.prefix });
  const signal = new AbortController().signal;
  return {
    run: () => sequentialCalls((call, stepId, index) => toolset.handle(call, { signal, toolCall: call, stepId, index })),
    verify: checkCalls,
  };
}

/** `TURNS` turns over `SESSIONS` sessions, each one remote call then an answer, on `workers` worker processes. */
export function prepareTurns(workers: number): () => Promise<PreparedVariant<number>> {
  return async () => {
    const fleet = await startFleet(workers);
    const turns = new TurnQueue({ connection: fleet.redis.url, prefix: fleet.prefix });
    return {
      async run() {
        const run = batch++;
        const handles = [];
        for (let i = 0; i < TURNS; i++) {
          const input = planInput({ label: `r${run}t${i}`, steps: [[{ tool: 'echo', args: { i } }]], parts: 5, partDelayMs: PART_DELAY_MS });
          handles.push(await turns.submit({ tenant: 'bench', session: `r${run}s${i % SESSIONS}`, input }));
        }
        const results = await Promise.all(handles.map((h) => h.result()));
        return results.filter((r) => r.steps === 2).length;
      },
      verify(done) {
        if (done !== TURNS) throw new Error(`expected ${TURNS} turns of 2 steps, got ${done}`);
      },
    };
  };
}
