/**
 * Variants of the `ledger` suite: the workload's turns on an in-memory `LinearContext`, on a
 * `LinearContext` with a JSONL file, and on a `RedisContext` (Redis without persistence, and with
 * AOF `appendfsync always`), each with steps that record nothing (`today`: the step function drops
 * the ledger) and with the ledger (`ledger`: each call's start and outcome are recorded; `written`:
 * a file's start records are not synced). Setup (temporary directory, redis-server, connection, the session's lock) is untimed.
 *
 * @module
 */
import { LinearContext, type Agent, type AgentContext, type AgentTurnResult, type LinearContextOptions } from '@kosong/core';
import { RedisContext } from '@kosong/bullmq';
import { RedisServer } from '@kosong/bullmq/testing';
import { Redis } from 'ioredis';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PreparedVariant } from '../../harness.js';
import { TURNS } from './turns.js';
import { countFileWrites, countRedisCommands, counts, snapshot } from './counters.js';
import { agentMaker, benchAgent, CALLS_PER_TURN, checkHistory, checkTurn, INPUT, MESSAGES_PER_TURN, type LedgerMode, type ToolTally } from './workload.js';

/** How long the paced model waits before each part it streams, in ms (500 parts a second: faster than any real model). */
export const PACE_MS = 2;

/** Turns of the untimed reference (no ledger) each Redis variant measures its round trips against. */
const REFERENCE_TURNS = 10;

/** What a timed run did. */
interface Output {
  readonly results: readonly AgentTurnResult[];
  /** Turns run on the context so far (this run's included). */
  readonly turnsSoFar: number;
  readonly executed: number;
  readonly withoutKey: number;
  /** Ledger records the context was handed (LinearContext variants). */
  readonly starts: number;
  readonly outcomes: number;
  /** Store traffic of the run. */
  readonly roundTrips: number;
  readonly commands: number;
  readonly writes: number;
  readonly syncs: number;
}

interface Records {
  starts: number;
  outcomes: number;
}

/** A `LinearContext` that counts the ledger records it is handed (every LinearContext variant uses it, so all pay the same). */
class CountingLinearContext extends LinearContext {
  readonly #records: Records;

  constructor(records: Records, path?: string, options?: LinearContextOptions) {
    super(path, options);
    this.#records = records;
  }

  override recordStart(...args: Parameters<LinearContext['recordStart']>): Promise<void> | undefined {
    this.#records.starts++;
    return super.recordStart(...args);
  }

  override recordOutcome(record: Parameters<LinearContext['recordOutcome']>[0]): Promise<void> | undefined {
    this.#records.outcomes++;
    return super.recordOutcome(record);
  }
}

/** Runs `turns` turns, counting the tools' calls, the ledger records and the store traffic. */
async function runTurns(turns: number, agentOf: () => Agent, tally: ToolTally, records: Records, turnsBefore: number): Promise<Output> {
  tally.executed = 0;
  tally.withoutKey = 0;
  records.starts = 0;
  records.outcomes = 0;
  const before = snapshot();
  const results: AgentTurnResult[] = [];
  for (let i = 0; i < turns; i++) results.push(await agentOf().run(INPUT));
  return {
    results,
    turnsSoFar: turnsBefore + turns,
    executed: tally.executed,
    withoutKey: tally.withoutKey,
    starts: records.starts,
    outcomes: records.outcomes,
    roundTrips: counts.roundTrips - before.roundTrips,
    commands: counts.commands - before.commands,
    writes: counts.writes - before.writes,
    syncs: counts.syncs - before.syncs,
  };
}

/** The checks every variant makes of a run: whole turns, every call run once with its idempotency key, the records its mode makes. */
function checkRun(label: string, mode: LedgerMode, turns: number, output: Output, countsRecords: boolean): void {
  if (output.results.length !== turns) throw new Error(`${label}: ${output.results.length} turns, expected ${turns}`);
  for (const result of output.results) checkTurn(label, result);
  if (output.executed !== turns * CALLS_PER_TURN) throw new Error(`${label}: ${output.executed} tool calls ran, expected ${turns * CALLS_PER_TURN}`);
  if (output.withoutKey !== 0) throw new Error(`${label}: ${output.withoutKey} calls had no idempotency key`);
  if (!countsRecords) return;
  const expected = mode === 'today' ? 0 : turns * CALLS_PER_TURN;
  if (output.starts !== expected || output.outcomes !== expected) {
    throw new Error(`${label}: the context was handed ${output.starts} start and ${output.outcomes} outcome records, expected ${expected} of each`);
  }
}

/** A temporary directory, removed when the process exits. */
function temporaryDirectory(): string {
  const dir = mkdtempSync(join(tmpdir(), 'kosong-bench-ledger-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Each turn on a new in-memory `LinearContext()` (no file): what the ledger's records cost in memory. */
export function prepareMemory(mode: LedgerMode): () => PreparedVariant<Output> {
  return () => {
    const label = `memory-${mode}`;
    const tally: ToolTally = { executed: 0, withoutKey: 0 };
    const records: Records = { starts: 0, outcomes: 0 };
    const agents = agentMaker(mode, tally);
    let last: LinearContext | undefined;
    const agentOf = () => agents((last = new CountingLinearContext(records)));
    return {
      run: () => runTurns(TURNS.memory, agentOf, tally, records, 0),
      verify(output) {
        checkRun(label, mode, TURNS.memory, output, true);
        checkHistory(label, last?.history ?? [], 1);
      },
    };
  };
}

/**
 * One session in a JSONL file (its lock taken before the runs), every turn appended to it; `paced`:
 * the model waits {@link PACE_MS} before each streamed part (as any real model takes its time).
 */
export function prepareFile(mode: LedgerMode, paced = false): () => Promise<PreparedVariant<Output>> {
  const turns: number = paced ? TURNS['file-paced'] : TURNS.file;
  return async () => {
    const label = `file-${paced ? 'paced-' : ''}${mode}`;
    const dir = temporaryDirectory();
    await countFileWrites(dir);
    const path = join(dir, 'session.jsonl');
    const records: Records = { starts: 0, outcomes: 0 };
    const context = new CountingLinearContext(records, path, mode === 'written' ? { syncCallStarts: false } : {});
    await context.restore(); // takes the session's lock
    const tally: ToolTally = { executed: 0, withoutKey: 0 };
    const agent = benchAgent(context, mode, tally, paced ? PACE_MS : undefined);
    let turnsSoFar = 0;
    return {
      async run() {
        const output = await runTurns(turns, () => agent, tally, records, turnsSoFar);
        turnsSoFar = output.turnsSoFar;
        return output;
      },
      verify(output) {
        checkRun(label, mode, turns, output, true);
        checkHistory(label, context.history, output.turnsSoFar);
        const roles = readFileSync(path, 'utf8')
          .trimEnd()
          .split('\n')
          .map((line) => (JSON.parse(line) as { role: string }).role);
        const messages = roles.filter((role) => !role.startsWith('_')).length;
        const started = roles.filter((role) => role === '_call_started').length;
        const settled = roles.filter((role) => role === '_call_settled').length;
        const records = mode === 'today' ? 0 : output.turnsSoFar * CALLS_PER_TURN;
        if (messages !== output.turnsSoFar * MESSAGES_PER_TURN || started !== records || settled !== records) {
          throw new Error(`${label}: the file has ${messages} messages, ${started} start and ${settled} outcome records after ${output.turnsSoFar} turns, expected ${output.turnsSoFar * MESSAGES_PER_TURN} and ${records} of each`);
        }
      },
      measure: (output) => ({
        syncsPerTurn: output.syncs / turns,
        writesPerTurn: output.writes / turns,
      }),
    };
  };
}

/** Whether this build's `RedisContext` keeps a call ledger of its own (without one, `Agent` keeps its ledger in memory). */
function hasLedger(context: AgentContext): boolean {
  return context.ledger !== undefined;
}

/**
 * One session in Redis, every turn appended to it, on a `redis-server` of its own (no persistence,
 * or AOF with `appendfsync always` when `aof`). Before the runs, untimed, {@link REFERENCE_TURNS}
 * turns without the ledger on another session give the round trips of a turn without ledger records,
 * which the `extraRoundTripsPerCall` metric is measured against (in this same process).
 */
export function prepareRedis(mode: LedgerMode, aof: boolean): () => Promise<PreparedVariant<Output>> {
  return async () => {
    const kind = aof ? 'redis-aof' : 'redis';
    const label = `${kind}-${mode}`;
    const turns = TURNS[kind];
    countRedisCommands();
    const server = await RedisServer.start({ persistent: aof });
    process.once('exit', () => server.killSync());
    const client = new Redis(server.url, { maxRetriesPerRequest: 3, connectionName: 'bench-ledger' });
    client.on('error', () => undefined);
    await client.ping();

    const tally: ToolTally = { executed: 0, withoutKey: 0 };
    const records: Records = { starts: 0, outcomes: 0 };
    const reference = new RedisContext({ connection: client, tenant: 'bench', session: 'reference', prefix: 'bench' });
    const referenceAgent = benchAgent(reference, 'today', tally);
    await runTurns(2, () => referenceAgent, tally, records, 0); // warms the scripts' cache and the path
    const measured = await runTurns(REFERENCE_TURNS, () => referenceAgent, tally, records, 2);
    checkRun(`${label} (reference)`, 'today', REFERENCE_TURNS, measured, false);
    const referenceRoundTripsPerTurn = measured.roundTrips / REFERENCE_TURNS;

    const context = new RedisContext({ connection: client, tenant: 'bench', session: `session-${mode}`, prefix: 'bench' });
    const ledger = hasLedger(context);
    const agent = benchAgent(context, mode, tally);
    let turnsSoFar = 0;
    return {
      async run() {
        const output = await runTurns(turns, () => agent, tally, records, turnsSoFar);
        turnsSoFar = output.turnsSoFar;
        return output;
      },
      verify(output) {
        checkRun(label, mode, turns, output, false);
        checkHistory(label, context.history, output.turnsSoFar);
      },
      async measure(output) {
        const stored = await client.llen(context.keys.history);
        if (stored !== output.turnsSoFar * MESSAGES_PER_TURN) throw new Error(`${label}: Redis holds ${stored} messages after ${output.turnsSoFar} turns, expected ${output.turnsSoFar * MESSAGES_PER_TURN}`);
        const roundTripsPerTurn = output.roundTrips / turns;
        return {
          roundTripsPerTurn,
          commandsPerTurn: output.commands / turns,
          extraRoundTripsPerCall: (roundTripsPerTurn - referenceRoundTripsPerTurn) / CALLS_PER_TURN,
          redisLedger: ledger ? 1 : 0,
        };
      },
    };
  };
}
