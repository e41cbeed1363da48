/**
 * The README snippets marked `<!-- example: examples/src/<file>.ts -->` are these example files,
 * word for word, and each of them runs to the end by itself (offline, with no API key set).
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const READMES = ['README.md', 'providers/echo/README.md'];
const MARKER = /<!-- example: (examples\/src\/[\w-]+\.ts)[^>]*-->\n```ts\n([\s\S]*?)```\n/g;

/** What each example prints (on stdout) when it works. */
const EXPECTED_OUTPUT: Record<string, RegExp> = {
  'examples/src/tools.ts': /^c1 5\nc2 \[ \{ type: 'text', text: '3' \} \]\n$/,
  'examples/src/telemetry.ts': /\[ 'chat echo' \]\n/,
  'examples/src/mock-provider.ts': /^Hello, world \| APIConnectionError: reset\n$/,
  'examples/src/run-context.ts': /^ada: book, lamp\nalan: chess set\n$/,
  'examples/src/structured-output.ts': /^Lyon 17 2026\ninvalid celsius, day\n$/,
};

function snippets(): Array<{ readme: string; file: string; code: string }> {
  return READMES.flatMap((readme) =>
    [...readFileSync(join(REPO_ROOT, readme), 'utf8').matchAll(MARKER)].map((match) => ({ readme, file: match[1]!, code: match[2]! })),
  );
}

/** Runs a compiled example with a clean environment (no API keys); resolves with its exit and output. */
function runExample(file: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const compiled = join(REPO_ROOT, file.replace(/^examples\/src\//, 'examples/lib/').replace(/\.ts$/, '.js'));
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME };
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [compiled], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${file} did not exit within 15 s (stdout so far: ${stdout}; stderr: ${stderr})`));
    }, 15_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('README examples', function () {
  this.timeout(30_000);
  const found = snippets();

  it('every example README snippet has an expected output here', () => {
    expect(found.map((s) => s.file).sort()).to.deep.equal(Object.keys(EXPECTED_OUTPUT).sort());
  });

  for (const { readme, file, code } of found) {
    it(`${readme}: ${file} is the snippet, word for word, and runs to the end by itself`, async () => {
      expect(code, `the snippet in ${readme}`).to.equal(readFileSync(join(REPO_ROOT, file), 'utf8'));
      const run = await runExample(file);
      expect(run.stderr, 'stderr').to.equal('');
      expect(run.code, run.stderr).to.equal(0);
      // Lines of the logging plugin (JSON) may interleave; the example's own output is checked without them.
      const own = run.stdout
        .split('\n')
        .filter((line) => !line.startsWith('{"level":'))
        .join('\n');
      expect(own).to.match(EXPECTED_OUTPUT[file]!);
    });
  }
});
