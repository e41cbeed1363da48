/**
 * `npm run bench` never rewrites a tracked file unless asked: the report and the charts go to the
 * git-ignored `bench/.bench-results/node<major>/`, and to `bench/results/node<major>/` only with
 * `--record`.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { nodeMajor, resultsFile, writeResults } from '../results-file.js';

const BENCH_DIR = fileURLToPath(new URL('../..', import.meta.url));

describe('bench: where the report is written', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'kosong-bench-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const chart = '<svg xmlns="http://www.w3.org/2000/svg"/>\n';

  it('writes to .bench-results/node<major>/ by default and to results/node<major>/ only when recording', async () => {
    const scratch = await writeResults({ report: '# a run\n', charts: new Map([['step.svg', chart]]) }, { record: false, benchDir: dir, major: 20 });
    expect(scratch).to.equal(join(dir, '.bench-results', 'node20', 'latest.md'));
    expect(readFileSync(scratch, 'utf8')).to.equal('# a run\n');
    expect(readFileSync(join(dir, '.bench-results', 'node20', 'step.svg'), 'utf8')).to.equal(chart);
    expect(existsSync(join(dir, 'results')), 'nothing under results/').to.equal(false);

    const recorded = await writeResults({ report: '# recorded\n', charts: new Map([['step.svg', chart]]) }, { record: true, benchDir: dir, major: 22 });
    expect(recorded).to.equal(join(dir, 'results', 'node22', 'latest.md'));
    expect(readFileSync(recorded, 'utf8')).to.equal('# recorded\n');
    expect(readFileSync(join(dir, 'results', 'node22', 'step.svg'), 'utf8')).to.equal(chart);
    expect(existsSync(join(dir, 'results', 'node20')), 'the other Node version is left alone').to.equal(false);
  });

  it('refuses a chart name that would leave the directory, before writing anything', async () => {
    for (const name of ['../escape.svg', 'a/b.svg', 'notes.md']) {
      await writeResults({ report: '# x\n', charts: new Map([[name, chart]]) }, { record: false, benchDir: dir, major: 20 }).then(
        () => expect.fail(`wrote ${name}`),
        (error: unknown) => expect(String(error)).to.contain(name),
      );
    }
    expect(existsSync(join(dir, '.bench-results', 'node20', 'latest.md'))).to.equal(false);
    expect(existsSync(join(dir, '.bench-results', 'escape.svg'))).to.equal(false);
  });

  it('reads the major version of Node', () => {
    expect(nodeMajor('v20.20.2')).to.equal(20);
    expect(nodeMajor('v22.1.0')).to.equal(22);
    expect(nodeMajor()).to.equal(Number(process.versions.node.split('.')[0]));
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
