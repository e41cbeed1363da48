/**
 * Where `npm run bench` writes its report and charts. A run writes to the git-ignored
 * `bench/.bench-results/node<major>/`, so benchmarking never changes a tracked file; `--record` writes
 * to `bench/results/node<major>/`, the results the README quotes, meant for a run whose numbers are
 * to be committed. Each Node major version has its own directory (the project supports 20 and 22).
 *
 * @module
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The `bench/` directory of this package. */
const BENCH_DIR = fileURLToPath(new URL('..', import.meta.url));

/** The major version of the running Node, e.g. `20`. */
export function nodeMajor(version: string = process.version): number {
  return Number(/^v?(\d+)\./.exec(version)?.[1] ?? NaN);
}

/** The directory of a run's files: `<benchDir>/results/node<major>` when recording, else `<benchDir>/.bench-results/node<major>`. */
export function resultsDirectory(record: boolean, benchDir: string = BENCH_DIR, major: number = nodeMajor()): string {
  return join(benchDir, record ? 'results' : '.bench-results', `node${major}`);
}

/** The report file of a run: `latest.md` in its {@link resultsDirectory}. */
export function resultsFile(record: boolean, benchDir: string = BENCH_DIR, major: number = nodeMajor()): string {
  return join(resultsDirectory(record, benchDir, major), 'latest.md');
}

/** What a run writes: the report, and a chart per suite (file name → SVG text). */
export interface RunFiles {
  readonly report: string;
  readonly charts: ReadonlyMap<string, string>;
}

/** Writes the report and the charts (creating the directory) and returns the report's path. */
export async function writeResults(
  files: RunFiles,
  options: { readonly record: boolean; readonly benchDir?: string; readonly major?: number },
): Promise<string> {
  const directory = resultsDirectory(options.record, options.benchDir, options.major);
  for (const name of files.charts.keys()) {
    if (!/^[\w.-]+\.svg$/.test(name) || name.startsWith('.')) throw new Error(`not a chart file name: ${name}`);
  }
  await mkdir(directory, { recursive: true });
  for (const [name, svg] of files.charts) await writeFile(join(directory, name), svg);
  const file = join(directory, 'latest.md');
  await writeFile(file, files.report);
  return file;
}
