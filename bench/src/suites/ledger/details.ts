/**
 * What one turn of the `ledger` workload sends to Redis, command by command, without the ledger
 * (`today`) and with recorded calls (`ledger`), and what it writes to a JSONL file: `node
 * bench/lib/suites/ledger/details.js` (after `npx tsc -b`). Not timed; it explains the suite's
 * round-trip and sync counts.
 *
 * @module
 */
import { LinearContext, type AgentContext } from '@kosong/core';
import { RedisContext } from '@kosong/bullmq';
import { RedisServer } from '@kosong/bullmq/testing';
import { Redis } from 'ioredis';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { countFileWrites, countRedisCommands, counts, snapshot } from './counters.js';
import { benchAgent, checkTurn, INPUT, type LedgerMode, type ToolTally } from './workload.js';

const MODES: readonly LedgerMode[] = ['today', 'ledger'];

async function redisTurn(server: RedisServer, mode: LedgerMode): Promise<string> {
  const client = new Redis(server.url, { maxRetriesPerRequest: 3 });
  client.on('error', () => undefined);
  await client.ping();
  try {
    const tally: ToolTally = { executed: 0, withoutKey: 0 };
    const context = new RedisContext({ connection: client, tenant: 'bench', session: `details-${mode}`, prefix: 'bench' });
    const agent = benchAgent(context, mode, tally);
    checkTurn(mode, await agent.run(INPUT)); // the first turn loads the scripts
    const before = snapshot();
    checkTurn(mode, await agent.run(INPUT));
    const byName = [...counts.byName]
      .map(([name, n]) => [name, n - (before.byName.get(name) ?? 0)] as const)
      .filter(([, n]) => n > 0)
      .map(([name, n]) => `${name} ×${n}`);
    const ledger = (context as AgentContext).ledger === undefined ? 'RedisContext has no ledger: Agent keeps it in memory' : 'RedisContext keeps the ledger';
    return `${counts.roundTrips - before.roundTrips} round trips, ${counts.commands - before.commands} commands (${byName.join(', ')}); ${ledger}`;
  } finally {
    client.disconnect();
  }
}

async function fileTurn(dir: string, mode: LedgerMode): Promise<string> {
  const path = join(dir, `${mode}.jsonl`);
  const context = new LinearContext(path);
  await context.restore();
  const tally: ToolTally = { executed: 0, withoutKey: 0 };
  const agent = benchAgent(context, mode, tally);
  checkTurn(mode, await agent.run(INPUT));
  const lines = (await readFile(path, 'utf8')).trimEnd().split('\n').length;
  const before = snapshot();
  checkTurn(mode, await agent.run(INPUT));
  const roles = (await readFile(path, 'utf8'))
    .trimEnd()
    .split('\n')
    .slice(lines)
    .map((line) => (JSON.parse(line) as { role: string }).role);
  const writes = counts.writes - before.writes;
  const syncs = counts.syncs - before.syncs;
  await context.close();
  return `${writes} writes, ${syncs} syncs; lines: ${roles.join(' ')}`;
}

async function main(): Promise<void> {
  countRedisCommands();
  const dir = await mkdtemp(join(tmpdir(), 'kosong-bench-ledger-'));
  try {
    await countFileWrites(dir);
    for (const mode of MODES) console.log(`file  ${mode.padEnd(6)}: ${await fileTurn(dir, mode)}`);
    for (const aof of [false, true]) {
      const server = await RedisServer.start({ persistent: aof });
      try {
        for (const mode of MODES) console.log(`${aof ? 'redis-aof' : 'redis'} ${mode.padEnd(6)}: ${await redisTurn(server, mode)}`);
      } finally {
        await server.stop();
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
