/**
 * Where `npm run bench` writes its report. A run writes to the git-ignored `bench/.bench-results/`,
 * so benchmarking never changes a tracked file; `--record` writes `bench/results/latest.md`, the
 * report the README quotes, and is meant for a run whose numbers are to be committed.
 *
 * @module
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The `bench/` directory of this package. */
const BENCH_DIR = fileURLToPath(new URL('..', import.meta.url));

/** The file a report goes to: `<benchDir>/results/latest.md` when recording, else `<benchDir>/.bench-results/latest.md`. */
export function resultsFile(record: boolean, benchDir: string = BENCH_DIR): string {
  return join(benchDir, record ? 'results' : '.bench-results', 'latest.md');
}

/** Writes the report (creating the directory) and returns the file written. */
export async function writeResults(report: string, options: { readonly record: boolean; readonly benchDir?: string }): Promise<string> {
  const file = resultsFile(options.record, options.benchDir);
  await mkdir(join(file, '..'), { recursive: true });
  await writeFile(file, report);
  return file;
}
