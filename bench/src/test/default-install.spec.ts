/**
 * The root install (`npm install` on a fresh clone) is clean on the oldest Node the project supports:
 * no package in the root lockfile declares an engine that excludes it. The peers the benchmarks
 * compare with (`ai` 7 needs Node 22) are installed on demand into `bench/peers`, outside it; the
 * root's AI SDK (for `@kosong/provider-ai-sdk`'s tests, the conformance suite, the CLI's tests and the
 * bench's `ai-sdk` suite) is AI SDK 6, which declares Node ≥ 18.
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import semver from 'semver';

const REPO_ROOT = fileURLToPath(new URL('../../..', import.meta.url));

interface LockEntry {
  readonly version?: string;
  readonly engines?: { readonly node?: string } | readonly string[];
  readonly dev?: boolean;
  readonly optional?: boolean;
}

function readJson<T>(path: string): T {
  return JSON.parse(readFileSync(join(REPO_ROOT, path), 'utf8')) as T;
}

describe('bench: the default install', () => {
  const root = readJson<{ engines: { node: string }; allowScripts?: Record<string, boolean> }>('package.json');
  const lock = readJson<{ packages: Record<string, LockEntry> }>('package-lock.json');
  const oldest = semver.minVersion(root.engines.node)!.version;

  it(`has no package that needs a newer Node than ${root.engines.node}`, () => {
    expect(oldest).to.equal('20.19.0');
    const tooNew = Object.entries(lock.packages)
      .filter(([path]) => path !== '')
      .flatMap(([path, entry]) => {
        const node = Array.isArray(entry.engines) ? undefined : (entry.engines as { node?: string } | undefined)?.node;
        return node !== undefined && !semver.satisfies(oldest, node) ? [`${path}@${entry.version} (node ${node})`] : [];
      });
    expect(tooNew, 'packages whose engines exclude the oldest supported Node (npm warns EBADENGINE)').to.deep.equal([]);
  });

  it('leaves the peer benchmarks (ai 7) to bench/peers, pinned there; the root has AI SDK 6 only (ai 6, @ai-sdk/provider 3)', () => {
    const aiSdk = Object.entries(lock.packages).filter(([path]) => /(^|\/)node_modules\/(ai|@ai-sdk\/provider)$/.test(path));
    const ofSdk7 = aiSdk.filter(([path, entry]) => semver.major(entry.version!) !== (path.endsWith('/ai') ? 6 : 3)).map(([path, entry]) => `${path}@${entry.version}`);
    expect(ofSdk7, 'ai and @ai-sdk/provider of another generation than AI SDK 6 in the root lockfile').to.deep.equal([]);
    const peers = readJson<{ dependencies: Record<string, string> }>('bench/peers/package.json');
    expect(peers.dependencies.ai).to.match(/^7\.\d+\.\d+$/);
    const peersLock = readJson<{ packages: Record<string, LockEntry> }>('bench/peers/package-lock.json');
    expect(peersLock.packages['node_modules/ai']?.version).to.equal(peers.dependencies.ai);
  });

  it("declines nx's install script explicitly (npm ≥ 11.19 would warn about an unreviewed one)", () => {
    const withScripts = Object.entries(lock.packages).filter(([, entry]) => (entry as { hasInstallScript?: boolean }).hasInstallScript);
    const unreviewed = withScripts.map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length)).filter((name) => root.allowScripts?.[name] === undefined);
    expect(unreviewed).to.deep.equal([]);
  });
});
