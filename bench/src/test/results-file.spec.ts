/**
 * `npm run bench` never rewrites a tracked file unless asked: the report goes to the git-ignored
 * `bench/.bench-results/`, and to `bench/results/` only with `--record`.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { resultsFile, writeResults } from '../results-file.js';

const BENCH_DIR = fileURLToPath(new URL('../..', import.meta.url));

describe('bench: where the report is written', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'kosong-bench-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('writes to .bench-results/ by default and to results/ only when recording', async () => {
    const scratch = await writeResults('# a run\n', { record: false, benchDir: dir });
    expect(scratch).to.equal(join(dir, '.bench-results', 'latest.md'));
    expect(readFileSync(scratch, 'utf8')).to.equal('# a run\n');
    expect(existsSync(join(dir, 'results')), 'nothing under results/').to.equal(false);

    const recorded = await writeResults('# recorded\n', { record: true, benchDir: dir });
    expect(recorded).to.equal(join(dir, 'results', 'latest.md'));
    expect(readFileSync(recorded, 'utf8')).to.equal('# recorded\n');
  });

  it('the default file is ignored by git and the recorded one is not', function () {
    const check = (file: string): boolean => {
      try {
        execFileSync('git', ['check-ignore', '-q', relative(BENCH_DIR, file)], { cwd: BENCH_DIR, stdio: 'ignore' });
        return true;
      } catch (error) {
        if ((error as { status?: number }).status === 1) return false;
        throw error;
      }
    };
    try {
      execFileSync('git', ['rev-parse', '--is-inside-work-tree'], { cwd: BENCH_DIR, stdio: 'ignore' });
    } catch {
      this.skip(); // not a git checkout: there is nothing tracked to protect
    }
    expect(check(resultsFile(false)), `${resultsFile(false)} is git-ignored`).to.equal(true);
    expect(check(resultsFile(true)), `${resultsFile(true)} is tracked`).to.equal(false);
  });
});
