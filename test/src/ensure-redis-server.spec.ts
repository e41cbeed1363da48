/**
 * `npm test` makes sure redis-server is there before it builds anything (issue 21, item 17):
 * test-support/ensure-redis-server.mjs, run on a PATH of fakes.
 */
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SCRIPT = join(ROOT, 'test-support', 'ensure-redis-server.mjs');
const scale = Number(process.env.KOSONG_TEST_TIMEOUT_SCALE) || 1;

describe('npm test: redis-server is made sure of first', function () {
  this.timeout(20_000);
  let bin: string;

  beforeEach(() => (bin = mkdtempSync(join(tmpdir(), 'kosong-redis-check-'))));
  afterEach(() => rmSync(bin, { recursive: true, force: true }));

  /** Runs the check with only `bin` on the PATH. */
  function check(env: Record<string, string> = {}): { status: number | null; stdout: string; stderr: string; ms: number } {
    const started = Date.now();
    const run = spawnSync(process.execPath, [SCRIPT], { encoding: 'utf8', env: { PATH: bin, ...env } });
    return { status: run.status, stdout: run.stdout, stderr: run.stderr, ms: Date.now() - started };
  }

  function fake(name: string, script: string): void {
    writeFileSync(join(bin, name), `#!/bin/sh\n${script}\n`);
    chmodSync(join(bin, name), 0o755);
  }

  it('is what `npm test` runs first, before the build', () => {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(manifest.scripts['test']).to.match(/^node test-support\/ensure-redis-server\.mjs && npm run build && /);
  });

  it('with redis-server on the PATH: says nothing, exit 0', () => {
    fake('redis-server', 'exit 0');
    const run = check();
    expect(run).to.include({ status: 0, stdout: '', stderr: '' });
  });

  it('missing, and no package manager: stops within a second (exit 1), saying how to get it', () => {
    const run = check();
    expect(run.status).to.equal(1);
    expect(run.ms, 'ms').to.be.below(1_000 * scale);
    expect(run.stdout).to.equal('');
    expect(run.stderr).to.equal(
      'npm test: redis-server is not on the PATH (the @kosong/bullmq and kosong --redis tests start their own redis-server). ' +
        'Install Redis (https://redis.io/docs/latest/operate/oss_and_stack/install/) and run npm test again (or set REDIS_SERVER to the path of a redis-server).\n',
    );
  });

  it('missing, with apt-get: installs it as root (saying so), or stops with the one command to run', () => {
    const log = join(bin, 'apt-get.log');
    // An apt-get that logs its arguments and "installs" a redis-server next to itself.
    fake('apt-get', `echo "$DEBIAN_FRONTEND $*" >> ${log}\nif [ "$1" = install ]; then printf '#!/bin/sh\\n' > ${bin}/redis-server; /bin/chmod +x ${bin}/redis-server; fi`);
    const run = check();
    if (process.getuid?.() === 0 && process.platform === 'linux') {
      expect(run.status, run.stderr).to.equal(0);
      expect(run.stdout).to.equal(
        "npm test: redis-server is missing (the @kosong/bullmq and kosong --redis tests start their own redis-server); installing Debian's: " +
          'apt-get update -qq && apt-get install -y -qq redis-server\nnpm test: redis-server installed\n',
      );
      expect(readFileSync(log, 'utf8')).to.equal('noninteractive update -qq\nnoninteractive install -y -qq redis-server\n');
    } else {
      expect(run.status).to.equal(1);
      expect(run.ms, 'ms').to.be.below(1_000 * scale);
      expect(run.stderr).to.include('. Install it with\n\n  sudo apt-get update && sudo apt-get install -y redis-server\n\nand run npm test again');
    }
  });

  it('a failed install stops npm test (exit 1), saying so', function () {
    if (process.getuid?.() !== 0 || process.platform !== 'linux') this.skip(); // only root installs
    fake('apt-get', 'exit 100');
    const run = check();
    expect(run.status).to.equal(1);
    expect(run.stderr).to.equal('npm test: installing redis-server failed (exit code 100); install it yourself, then run npm test again\n');
  });

  it('REDIS_SERVER naming no executable: stops, naming it', () => {
    fake('redis-server', 'exit 0');
    const run = check({ REDIS_SERVER: join(bin, 'no-such-redis-server') });
    expect(run.status).to.equal(1);
    expect(run.stderr).to.include(`REDIS_SERVER=${join(bin, 'no-such-redis-server')} is not an executable file`);
  });
});
