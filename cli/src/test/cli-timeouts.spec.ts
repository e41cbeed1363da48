/**
 * `--timeout` (each turn's time budget) and `--tool-timeout` (each tool call's), through the real
 * CLI: a bash call that sleeps is stopped when its budget runs out, the user is told which budget
 * and how long, and a turn that ran out exits 124. Bad values are usage errors (exit 2).
 */
import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { jsonEvents, killLeftovers, makeWorkspace, runCli, toolCallLine, type Workspace } from './cli-harness.js';

/** A bash call that sleeps 5 s, then touches `marker` (so a run that was not stopped leaves it). */
function sleepingBash(marker: string): string {
  return toolCallLine('b1', 'bash', { command: `sleep 5 && touch ${marker}` });
}

describe('kosong CLI: --timeout and --tool-timeout', function () {
  this.timeout(60_000);
  let ws: Workspace;

  beforeEach(() => {
    ws = makeWorkspace();
  });
  afterEach(() => {
    killLeftovers();
    ws.remove();
  });

  it('--timeout stops the turn, its running bash command too, says which budget and how long, and exits 124', async () => {
    const marker = join(ws.base, 'ran-to-the-end');
    const started = Date.now();
    const run = await runCli(['--provider', 'echo', '--allow-bash', '--timeout', '400', 'run', `${sleepingBash(marker)}\n---\ntext: never`], ws.cwd);
    expect(run.code, run.stderr).to.equal(124);
    expect(run.stdout).to.include('✗ timed out: the turn ran longer than --timeout 400 ms and was stopped (its running tools too)');
    expect(Date.now() - started, 'the 5 s command did not hold the turn').to.be.below(4_500);
    await new Promise((resolve) => setTimeout(resolve, 5_500 - (Date.now() - started)));
    expect(existsSync(marker), 'the command was stopped').to.equal(false);
  });

  it('--json: the turn_failed event names the budget and its length', async () => {
    const run = await runCli(['--provider', 'echo', '--allow-bash', '--json', '--timeout', '0.3s', 'run', `${sleepingBash(join(ws.base, 'm'))}\n---\ntext: never`], ws.cwd);
    expect(run.code, run.stderr).to.equal(124);
    const failed = jsonEvents(run.stdout).find((event) => event.type === 'turn_failed');
    expect(failed?.error).to.deep.include({ name: 'TimeoutBudgetError', budget: 'turn', limitMs: 300 });
  });

  it('--tool-timeout stops the call, the model is told it timed out, and the turn goes on (exit 0)', async () => {
    const run = await runCli(['--provider', 'echo', '--allow-bash', '--json', '--tool-timeout', '300', 'run', `${sleepingBash(join(ws.base, 'm'))}\n---\ntext: after the timeout`], ws.cwd);
    expect(run.code, run.stderr).to.equal(0);
    const events = jsonEvents(run.stdout);
    const result = events.find((event) => event.type === 'tool_result')?.result as { returnValue: { isError: boolean; message: string } };
    expect(result.returnValue.isError).to.equal(true);
    expect(result.returnValue.message).to.match(/timed out/).and.include('toolCallMs: 300');
    expect(events.at(-1)).to.include({ type: 'turn_end' });
    expect(run.stdout).to.include('after the timeout');
  });

  it('a budget that does not run out changes nothing (1m, 30s)', async () => {
    const run = await runCli(['--provider', 'echo', '--timeout', '1m', '--tool-timeout', '30s', 'run', 'text: in time'], ws.cwd);
    expect(run.stderr).to.equal('');
    expect(run.code).to.equal(0);
    expect(run.stdout).to.include('in time');
  });

  const bad: ReadonlyArray<readonly [string, string]> = [
    ['--timeout', '0'],
    ['--timeout', 'soon'],
    ['--timeout', '1y'],
    ['--timeout', '-5'],
    ['--timeout', '30d'],
    ['--tool-timeout', ''],
    ['--tool-timeout', '1e3'],
  ];
  for (const [flag, value] of bad) {
    it(`refuses ${flag} ${JSON.stringify(value)} (exit 2) before anything runs`, async () => {
      const run = await runCli(['--provider', 'echo', flag, value, 'run', 'text: never'], ws.cwd);
      expect(run.code).to.equal(2);
      expect(run.stderr).to.include(flag).and.include('expected a duration');
      expect(run.stdout).to.equal('');
    });
  }

  it('is refused with --redis and by kosong worker (not supported there yet), exit 2', async () => {
    const remote = await runCli(['--redis', 'redis://127.0.0.1:1', '--timeout', '5s', 'run', 'hi'], ws.cwd);
    expect(remote.code).to.equal(2);
    expect(remote.stderr).to.include('--timeout and --tool-timeout are not supported with --redis yet');
    const worker = await runCli(['--redis', 'redis://127.0.0.1:1', '--tool-timeout', '5s', 'worker'], ws.cwd);
    expect(worker.code).to.equal(2);
    expect(worker.stderr).to.include('--tool-timeout is not supported by the worker');
  });
});
