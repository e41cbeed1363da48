/**
 * The `kosong usage` command on the command line: its flags, parsed and checked (a bad one is a
 * usage error, exit 2); the command itself is loaded when it runs.
 *
 * @module
 */
import type { UsageGroupKey } from '@kosong/core/kernel';
import { InvalidArgumentError, type Command } from 'commander';
import { fail } from '../setup-failure.js';
import { parseUsageTime } from './usage-time.js';

/** The keys `--by` takes. */
export const GROUP_KEYS: readonly UsageGroupKey[] = ['model', 'provider', 'tenant', 'day'];

/** Parses `--by model`, `--by day,model` (distinct keys, in that order). @throws InvalidArgumentError otherwise. */
export function parseGroupBy(value: string): UsageGroupKey[] {
  const keys = value.split(',').map((key) => key.trim());
  for (const key of keys) {
    if (!(GROUP_KEYS as readonly string[]).includes(key)) throw new InvalidArgumentError(`expected ${GROUP_KEYS.join(', ')} (or several, comma-separated), got "${key}"`);
  }
  if (new Set(keys).size !== keys.length) throw new InvalidArgumentError('a key is given twice');
  return keys as UsageGroupKey[];
}

/** The global options `kosong usage` takes (the others are refused, not ignored). */
const USAGE_GLOBALS: ReadonlySet<string> = new Set(['json', 'redis']);

/** Adds `kosong usage` to the program. */
export function registerUsageCommand(program: Command): void {
  program
    .command('usage')
    .description(
      'tokens and cost of the steps kosong ran, from the usage file ($KOSONG_HOME/usage.jsonl, default ~/.kosong/usage.jsonl), ' +
        'or a Redis usage ledger with --redis; counted in whole UTC days',
    )
    .option('--since <when>', 'from this UTC day on: 7d, 24h (back from now), 2026-11-01, or an ISO time (2026-11-01T12:00:00Z)', (value: string) => parseUsageTime(value, 'since'))
    .option('--until <when>', 'up to this UTC day, included: the same forms (--until 2026-11-30 includes November 30)', (value: string) => parseUsageTime(value, 'until'))
    .option('--by <keys>', `rows by ${GROUP_KEYS.join(', ')}, or several (day,model)`, parseGroupBy, ['model'] as UsageGroupKey[])
    .action(async (commandOptions: { since?: number; until?: number; by: UsageGroupKey[] }) => {
      const given = program.options
        .map((option) => option.attributeName())
        .filter((key) => !USAGE_GLOBALS.has(key) && program.getOptionValueSource(key) === 'cli');
      if (given.length > 0) {
        const flags = program.options.filter((option) => given.includes(option.attributeName())).map((option) => option.long);
        fail(`usage: ${flags.join(', ')} ${flags.length === 1 ? 'is not an option' : 'are not options'} of kosong usage (its options: --since, --until, --by, --json, --redis)`);
      }
      const globals = program.opts<{ json?: boolean; redis?: string }>();
      const { runUsage } = await import('./usage-command.js');
      await runUsage({ since: commandOptions.since, until: commandOptions.until, groupBy: commandOptions.by, json: globals.json === true, redis: globals.redis });
    });
}
