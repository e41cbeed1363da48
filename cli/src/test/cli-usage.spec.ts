/**
 * The usage file and `kosong usage`, driven through the real CLI (`--provider echo`: the prompt is
 * the script, its `usage:` line the step's `TokenUsage`): every step of `run` and `chat` appended,
 * the table and `--json` over it, unknown prices, time ranges, a torn last line, bad flags; and
 * appends of several processes at once, which never interleave.
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RedisUsageLedger } from '@kosong/bullmq';
import { RedisServer } from '@kosong/bullmq/testing';
import { readUsageFile, UsageFileLedger } from '../usage/usage-file-ledger.js';
import { killLeftovers, makeWorkspace, runCli, toolCallLine, type Workspace } from './cli-harness.js';

/** A record line as the CLI writes it. */
function line(at: string, provider: string, model: string, usage: [number, number, number, number], costUsd: number | null, tenant: string | null = null): string {
  const [inputOther, output, inputCacheRead, inputCacheCreation] = usage;
  return `${JSON.stringify({ at, tenant, provider, model, usage: { inputOther, output, inputCacheRead, inputCacheCreation }, costUsd })}\n`;
}

describe('kosong CLI: the usage file and `kosong usage`', function () {
  this.timeout(60_000);
  let ws: Workspace;
  let home: string;
  let file: string;
  const env = (): Record<string, string> => ({ KOSONG_HOME: home });
  const kosong = (args: readonly string[], input?: string) => runCli(args, ws.cwd, { env: env(), ...(input === undefined ? {} : { input }) });

  beforeEach(() => {
    ws = makeWorkspace();
    home = join(ws.base, 'home'); // made by the CLI at its first record
    file = join(home, 'usage.jsonl');
  });
  afterEach(() => {
    killLeftovers();
    ws.remove();
  });

  it('records given at once are written in their order (one write at a time on the descriptor)', async () => {
    const path = join(home, 'ordered', 'usage.jsonl');
    const ledger = new UsageFileLedger(path);
    const at = Date.parse('2026-12-01T00:00:00Z');
    for (let i = 0; i < 300; i++) {
      void ledger.record({ tenant: undefined, provider: 'echo', model: 'echo', usage: { inputOther: i, output: 1, inputCacheRead: 0, inputCacheCreation: 0 }, costUsd: undefined, at });
    }
    await ledger.close();
    const { records, warnings } = await readUsageFile(path);
    expect(warnings).to.deep.equal([]);
    expect(records.map((r) => r.usage.inputOther)).to.deep.equal(Array.from({ length: 300 }, (_, i) => i));
  });

  it('records each step of a run, with the provider\'s usage; the file is made 0600 in a 0700 directory', async () => {
    const script = [
      'usage: {"input_other": 100, "output": 20, "input_cache_read": 7}',
      toolCallLine('c1', 'calculate', { expression: '6 * 7' }),
      '---',
      'usage: {"input_other": 130, "output": 5, "input_cache_creation": 3}',
      'text: 42',
    ].join('\n');
    const run = await kosong(['--provider', 'echo', 'run', script]);
    expect(run.stderr).to.equal('');
    expect(run.code).to.equal(0);
    const records = readFileSync(file, 'utf8').trimEnd().split('\n').map((text) => JSON.parse(text) as Record<string, unknown>);
    expect(records).to.have.length(2);
    expect(records.map((r) => r.usage)).to.deep.equal([
      { inputOther: 100, output: 20, inputCacheRead: 7, inputCacheCreation: 0 },
      { inputOther: 130, output: 5, inputCacheRead: 0, inputCacheCreation: 3 },
    ]);
    expect(records[0]).to.include({ tenant: null, provider: 'echo', model: 'echo', costUsd: null });
    expect(Date.now() - Date.parse(records[0]!.at as string)).to.be.within(0, 60_000);
    expect(statSync(file).mode & 0o777).to.equal(0o600);
    expect(statSync(home).mode & 0o777).to.equal(0o700);

    const usage = await kosong(['usage']);
    expect(usage.code).to.equal(0);
    expect(usage.stderr).to.equal('');
    const lines = usage.stdout.trimEnd().split('\n');
    expect(lines[0]).to.match(/^model\s+steps\s+input\s+output\s+cache read\s+cache write\s+cost \(USD\)$/);
    // The echo model has no price: its cost is unknown, never $0.
    expect(lines[1]).to.match(/^echo\s+2\s+230\s+25\s+7\s+3\s+unknown$/);
    expect(lines).to.have.length(2);
  });

  it('records each turn of a chat', async () => {
    const chat = await kosong(['--provider', 'echo', 'chat'], 'usage: {"input_other": 1, "output": 2}\\\ntext: one\nusage: {"input_other": 3, "output": 4}\\\ntext: two\n');
    expect(chat.code, chat.stderr).to.equal(0);
    const json = await kosong(['usage', '--json']);
    expect(json.code).to.equal(0);
    const report = JSON.parse(json.stdout) as { total: { steps: number; usage: object; costUsd: null } };
    expect(report.total).to.deep.include({ steps: 2, usage: { inputOther: 4, output: 6, inputCacheRead: 0, inputCacheCreation: 0 }, costUsd: null });
  });

  it('shows known costs in dollars, a mixed total as unknown with its known part; --json says null, never 0', async () => {
    mkdirSync(home, { recursive: true });
    const today = new Date().toISOString();
    writeFileSync(file, line(today, 'openai', 'gpt-4o', [1000, 100, 0, 0], 0.0035) + line(today, 'openai', 'gpt-4o', [2000, 200, 0, 0], 0.007) + line(today, 'echo', 'echo', [5, 5, 0, 0], null));
    const table = await kosong(['usage', '--by', 'provider,model']);
    expect(table.code).to.equal(0);
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines[0]).to.match(/^provider\s+model\s+steps/);
    expect(lines[1]).to.match(/^echo\s+echo\s+1\s+5\s+5\s+0\s+0\s+unknown$/);
    expect(lines[2]).to.match(/^openai\s+gpt-4o\s+2\s+3,000\s+300\s+0\s+0\s+\$0\.010500$/);
    expect(lines[3]).to.match(/^total\s+3\s+3,005\s+305\s+0\s+0\s+unknown \(≥ \$0\.010500\)$/);

    const json = await kosong(['usage', '--by', 'model', '--json']);
    expect(json.code).to.equal(0);
    const report = JSON.parse(json.stdout) as { source: string; rows: Array<Record<string, unknown>>; total: Record<string, unknown>; warnings: unknown[] };
    expect(report.source).to.equal(file);
    expect(report.rows.map((row) => [row.model, row.steps, row.costUsd, row.unknownCostSteps])).to.deep.equal([
      ['echo', 1, null, 1],
      ['gpt-4o', 2, 0.0105, 0],
    ]);
    expect(report.total).to.include({ steps: 3, costUsd: null, unknownCostSteps: 1 });
    expect(report.total.knownCostUsd).to.be.closeTo(0.0105, 1e-12);
    expect(report.warnings).to.deep.equal([]);
  });

  it('--since and --until select whole UTC days; --by day, tenant', async () => {
    mkdirSync(home, { recursive: true });
    writeFileSync(
      file,
      line('2026-11-01T23:59:59.999Z', 'openai', 'gpt-4o', [1, 0, 0, 0], 0.5, 'acme') +
        line('2026-11-15T00:00:00.000Z', 'openai', 'gpt-4o', [10, 0, 0, 0], 1, 'acme') +
        line('2026-11-15T12:00:00.000Z', 'openai', 'gpt-4o', [100, 0, 0, 0], 2) +
        line('2026-11-30T23:00:00.000Z', 'openai', 'gpt-4o', [1000, 0, 0, 0], 4, 'globex'),
    );
    const rows = async (args: readonly string[]): Promise<Array<Record<string, unknown>>> => {
      const run = await kosong(['usage', '--json', ...args]);
      expect(run.code, run.stderr).to.equal(0);
      return (JSON.parse(run.stdout) as { rows: Array<Record<string, unknown>> }).rows;
    };
    expect((await rows(['--by', 'day'])).map((row) => [row.day, row.steps])).to.deep.equal([
      ['2026-11-01', 1],
      ['2026-11-15', 2],
      ['2026-11-30', 1],
    ]);
    expect((await rows(['--by', 'day', '--since', '2026-11-02', '--until', '2026-11-15'])).map((row) => row.day)).to.deep.equal(['2026-11-15']);
    // --until a day includes that day; an ISO time selects the day holding it.
    expect((await rows(['--by', 'day', '--until', '2026-11-01'])).map((row) => row.day)).to.deep.equal(['2026-11-01']);
    expect((await rows(['--by', 'day', '--since', '2026-11-30T22:00:00Z'])).map((row) => row.day)).to.deep.equal(['2026-11-30']);
    expect((await rows(['--by', 'tenant'])).map((row) => [row.tenant, row.steps, row.costUsd])).to.deep.equal([
      [null, 1, 2],
      ['acme', 2, 1.5],
      ['globex', 1, 4],
    ]);
    // 7d back from now: the days from the UTC day holding that time on.
    const from = new Date(Date.now() - 7 * 86_400_000).toISOString().slice(0, 10);
    const expected = ['2026-11-01', '2026-11-15', '2026-11-30'].filter((day) => day >= from);
    expect((await rows(['--by', 'day', '--since', '7d'])).map((row) => row.day)).to.deep.equal(expected);
    expect((await rows(['--by', 'day', '--since', '24h'])).map((row) => row.day)).to.deep.equal(expected.filter((day) => day >= new Date(Date.now() - 86_400_000).toISOString().slice(0, 10)));
  });

  it('skips a torn last line with a warning, and the next step starts a line of its own', async () => {
    mkdirSync(home, { recursive: true });
    const today = new Date().toISOString();
    writeFileSync(file, line(today, 'openai', 'gpt-4o', [10, 1, 0, 0], 0.25) + line(today, 'openai', 'gpt-4o', [20, 2, 0, 0], 0.25).slice(0, 40));
    const before = await kosong(['usage', '--json']);
    expect(before.code).to.equal(0);
    expect(before.stderr).to.match(/warning: .*usage\.jsonl: the last line \(2\) is cut short/);
    expect((JSON.parse(before.stdout) as { total: { steps: number } }).total.steps).to.equal(1);

    const run = await kosong(['--provider', 'echo', 'run', 'usage: {"input_other": 3, "output": 4}\ntext: hi']);
    expect(run.code, run.stderr).to.equal(0);
    const after = await kosong(['usage', '--by', 'model', '--json']);
    expect(after.code).to.equal(0);
    // The torn bytes are now a damaged line of their own; the new record is whole.
    expect(after.stderr).to.match(/line 2 is not a usage record/);
    expect((JSON.parse(after.stdout) as { rows: Array<{ model: string; steps: number }> }).rows.map((row) => [row.model, row.steps])).to.deep.equal([
      ['echo', 1],
      ['gpt-4o', 1],
    ]);
  });

  it('says so when nothing is recorded (no file yet)', async () => {
    const run = await kosong(['usage']);
    expect(run.code).to.equal(0);
    expect(run.stdout).to.equal(`no usage recorded (${file})\n`);
  });

  const bad: ReadonlyArray<readonly [readonly string[], RegExp]> = [
    [['usage', '--by', 'week'], /--by.*expected model, provider, tenant, day/],
    [['usage', '--by', 'model,model'], /--by.*given twice/],
    [['usage', '--since', 'yesterday'], /--since.*expected a duration back from now/],
    [['usage', '--since', '2026-02-30'], /--since.*not a day of the calendar/],
    [['usage', '--until', '2026-11-01T12:00'], /--until.*expected/],
    [['usage', '--since', '2026-11-02', '--until', '2026-11-01'], /--until must be later than --since/],
    [['usage', '--bogus'], /unknown option '--bogus'/],
    [['--session', 's.jsonl', 'usage'], /--session is not an option of kosong usage/],
    [['--max-steps', '2', '--temperature', '1', 'usage'], /--max-steps, --temperature are not options of kosong usage/],
  ];
  for (const [args, message] of bad) {
    it(`refuses \`kosong ${args.join(' ')}\` (exit 2, nothing on stdout)`, async () => {
      const run = await kosong(args);
      expect(run.code).to.equal(2);
      expect(run.stderr).to.match(message);
      expect(run.stdout).to.equal('');
    });
  }

  it('a usage file that cannot be written does not stop the turn: the failure is said on stderr', async () => {
    writeFileSync(join(ws.base, 'a-file'), '');
    for (const badHome of [join(ws.base, 'a-file', 'home'), '/proc/kosong-cannot-be-here']) {
      const run = await runCli(['--provider', 'echo', 'run', 'usage: {"input_other": 1, "output": 1}\ntext: hi'], ws.cwd, { env: { KOSONG_HOME: badHome }, timeoutMs: 20_000 });
      expect(run.code, badHome).to.equal(0);
      expect(run.stdout).to.include('hi');
      expect(run.stderr).to.match(/kosong\.usage\.record rejected .*(ENOTDIR|ENOENT)/);
    }
  });

  it('refuses a relative KOSONG_HOME (exit 2) for usage and for a run', async () => {
    for (const args of [['usage'], ['--provider', 'echo', 'run', 'text: hi']]) {
      const run = await runCli(args, ws.cwd, { env: { KOSONG_HOME: 'relative/home' } });
      expect(run.code).to.equal(2);
      expect(run.stderr).to.include('KOSONG_HOME must be an absolute path');
    }
  });
});

describe('the usage file: appends of several processes at once', function () {
  this.timeout(60_000);
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'kosong-usage-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps every line whole: 4 processes × 300 records of 4 KB lines', async () => {
    const file = join(dir, 'usage.jsonl');
    const ledger = fileURLToPath(new URL('../usage/usage-file-ledger.js', import.meta.url));
    // Each writer records 300 steps as fast as it can, all in flight at once, with a 4 KB model name.
    const writer = `
      const { UsageFileLedger } = await import(${JSON.stringify(ledger)});
      const ledger = new UsageFileLedger(${JSON.stringify(file)});
      const model = process.argv[1].repeat(4096);
      await Promise.all(Array.from({ length: 300 }, (_, i) => ledger.record({ tenant: undefined, provider: 'p', model, usage: { inputOther: i, output: 1, inputCacheRead: 0, inputCacheCreation: 0 }, costUsd: 0.001, at: Date.now() })));
      await ledger.close();
    `;
    const exits = ['a', 'b', 'c', 'd'].map(
      (letter) =>
        new Promise<number | null>((resolve) => {
          const child = spawn(process.execPath, ['--input-type=module', '-e', writer, letter], { stdio: ['ignore', 'ignore', 'inherit'] });
          child.on('close', resolve);
        }),
    );
    expect(await Promise.all(exits)).to.deep.equal([0, 0, 0, 0]);
    const { records, warnings } = await readUsageFile(file);
    expect(warnings).to.deep.equal([]);
    expect(records).to.have.length(1200);
    for (const letter of ['a', 'b', 'c', 'd']) {
      const own = records.filter((record) => record.model === letter.repeat(4096));
      expect(own.map((record) => record.usage.inputOther).sort((x, y) => x - y)).to.deep.equal(Array.from({ length: 300 }, (_, i) => i));
    }
    expect(readFileSync(file, 'utf8').split('\n')).to.have.length(1201);
  });

  it('a record after close is refused; a torn line never swallows the next record', async () => {
    const file = join(dir, 'usage.jsonl');
    appendFileSync(file, '{"at":"2026-12-01T00:00:00.000Z","tenant":null,"prov');
    const ledger = new UsageFileLedger(file);
    const record = { tenant: 'acme', provider: 'p', model: 'm', usage: { inputOther: 1, output: 2, inputCacheRead: 3, inputCacheCreation: 4 }, costUsd: undefined, at: Date.parse('2026-12-01T10:00:00Z') };
    await ledger.record(record);
    await ledger.record(record);
    await ledger.close();
    let refused: unknown;
    await ledger.record(record).catch((error: unknown) => (refused = error));
    expect(String(refused)).to.include('closed');
    const { records, warnings } = await readUsageFile(file);
    expect(records).to.deep.equal([record, record]);
    expect(warnings).to.have.length(1);
    expect(warnings[0]).to.include('line 1 is not a usage record');
    const rows = await new UsageFileLedger(file).query({ groupBy: ['tenant'] });
    expect(rows).to.have.length(1);
    expect(rows[0]).to.deep.include({ tenant: 'acme', steps: 2, costUsd: undefined, unknownCostSteps: 2 });
    expect(await new UsageFileLedger(file).spentUsd('acme', 0)).to.equal(0);
  });
});

describe('kosong usage --redis: the usage ledger of the workers (real redis-server)', function () {
  this.timeout(60_000);
  let redis: RedisServer;
  let ws: Workspace;
  before(async () => {
    redis = await RedisServer.start();
  });
  after(async () => {
    await redis.stop();
  });
  beforeEach(() => (ws = makeWorkspace()));
  afterEach(() => {
    killLeftovers();
    ws.remove();
  });

  it('reads the records of RedisUsageLedger, by tenant and model, with unknown costs as unknown', async () => {
    const ledger = new RedisUsageLedger({ connection: redis.url });
    const at = Date.parse('2026-11-20T10:00:00Z');
    const usage = { inputOther: 100, output: 10, inputCacheRead: 5, inputCacheCreation: 0 };
    await ledger.record({ tenant: 'acme', provider: 'openai', model: 'gpt-4o', usage, costUsd: 0.5, at });
    await ledger.record({ tenant: 'acme', provider: 'openai', model: 'gpt-4o', usage, costUsd: 0.25, at });
    await ledger.record({ tenant: 'globex', provider: 'echo', model: 'echo', usage, costUsd: undefined, at });
    await ledger.close();
    const json = await runCli(['--redis', redis.url, 'usage', '--by', 'tenant,model', '--json', '--since', '2026-11-20', '--until', '2026-11-20'], ws.cwd);
    expect(json.code, json.stderr).to.equal(0);
    const report = JSON.parse(json.stdout) as { source: string; rows: Array<Record<string, unknown>>; total: Record<string, unknown> };
    expect(report.source).to.equal(redis.url);
    expect(report.rows.map((row) => [row.tenant, row.model, row.steps, row.costUsd])).to.deep.equal([
      ['acme', 'gpt-4o', 2, 0.75],
      ['globex', 'echo', 1, null],
    ]);
    expect(report.total).to.deep.include({ steps: 3, costUsd: null, usage: { inputOther: 300, output: 30, inputCacheRead: 15, inputCacheCreation: 0 } });
    const other = await runCli(['--redis', redis.url, 'usage', '--since', '2026-11-21'], ws.cwd);
    expect(other.code).to.equal(0);
    expect(other.stdout).to.equal(`no usage recorded in that time (${redis.url})\n`);
    const table = await runCli(['--redis', redis.url, 'usage', '--by', 'tenant'], ws.cwd);
    expect(table.stdout).to.match(/^acme\s+2\s+200\s+20\s+10\s+0\s+\$0\.750000$/m);
    expect(table.stdout).to.match(/^globex\s+1\s+100\s+10\s+5\s+0\s+unknown$/m);
  });

  it('an unreachable Redis is a setup error (exit 2) after a short wait, its password not shown', async () => {
    const run = await runCli(['--redis', 'redis://user:s3cret-pw@127.0.0.1:1', 'usage'], ws.cwd, { timeoutMs: 20_000 });
    expect(run.code).to.equal(2);
    expect(run.stderr).to.include('usage: cannot read the usage ledger at redis://127.0.0.1:1');
    expect(run.stderr + run.stdout).not.to.include('s3cret-pw');
  });
});
