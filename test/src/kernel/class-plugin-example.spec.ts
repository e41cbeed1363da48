import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect } from 'chai';

const EXAMPLE = fileURLToPath(new URL('../../../examples/lib/class-plugin.js', import.meta.url));

describe('examples/class-plugin (run as a user would)', () => {
  it('runs offline: per-tenant models with their own keys, a shared usage meter, lifecycles in order', async function () {
    this.timeout(20_000);
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [EXAMPLE], { timeout: 15_000 });
    expect(stderr).to.equal('');
    expect(stdout.trimEnd().split('\n')).to.deep.equal([
      'model for key …1111 ready',
      'model for key …2222 ready',
      '2026-01-01T00:00:00.000Z acme: 20 tokens',
      'acme got: Hello, this is your model (key ****1111).',
      '2026-01-01T00:00:00.000Z globex: 20 tokens',
      'globex got: Hello, this is your model (key ****2222).',
      '2026-01-01T00:00:00.000Z acme: 20 tokens',
      'acme got: Hello, this is your model (key ****1111).',
      'model for key …2222 closed',
      'model for key …1111 closed',
      'usage store closed (acme: 40 tokens, globex: 20 tokens)',
    ]);
  });
});
