/**
 * The `kosong` bin as npm links it: a committed, executable entry point that is not a build output,
 * so that the link made by the very first `npm install` (before `prepare` has built the bundle
 * `dist/`) works. It runs the bundle.
 */
import { expect } from 'chai';
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const CLI_DIR = fileURLToPath(new URL('../..', import.meta.url));
const REPO_ROOT = resolve(CLI_DIR, '..');
const manifest = JSON.parse(readFileSync(join(CLI_DIR, 'package.json'), 'utf8')) as { bin: Record<string, string> };

describe('kosong CLI: the bin entry', function () {
  this.timeout(20_000);
  const bin = resolve(CLI_DIR, manifest.bin.kosong ?? '');

  it('is a committed, executable file outside the build output', function () {
    expect(manifest.bin).to.have.property('kosong');
    expect(relative(CLI_DIR, bin).split('/')[0], 'not in lib/ or dist/, which only `prepare` creates').not.to.be.oneOf(['lib', 'dist']);
    let staged: string;
    try {
      staged = execFileSync('git', ['ls-files', '--stage', '--', bin], { cwd: REPO_ROOT, encoding: 'utf8' });
    } catch {
      this.skip(); // not a git checkout (e.g. an unpacked tarball): what is committed cannot be checked
    }
    expect(staged, `${relative(REPO_ROOT, bin)} is committed with the executable bit`).to.match(/^100755 /);
  });

  it('runs the CLI through npx from the repository root', () => {
    const run = spawnSync('npx', ['--no-install', 'kosong', '--help'], { cwd: REPO_ROOT, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
    expect(run.stderr).to.equal('');
    expect(run.status).to.equal(0);
    expect(run.stdout).to.match(/^Usage: kosong /);
  });

  it('says how to build when the bundle is not there yet, exit 2', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kosong-bin-'));
    try {
      mkdirSync(join(dir, 'bin'));
      copyFileSync(bin, join(dir, 'bin', 'kosong.js'));
      const run = spawnSync(process.execPath, [join(dir, 'bin', 'kosong.js'), '--help'], { encoding: 'utf8' });
      expect(run.status).to.equal(2);
      expect(run.stdout).to.equal('');
      expect(run.stderr).to.equal('kosong: the CLI is not built yet (cli/dist/kosong.js is missing); run `npm run build` in the repository first\n');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
