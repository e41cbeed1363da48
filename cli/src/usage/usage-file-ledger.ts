/**
 * The CLI's usage ledger: one JSON line per step in a file (`~/.kosong/usage.jsonl`, see
 * {@link usageFilePath}), appended by every `kosong run` and `kosong chat`, read by `kosong usage`.
 *
 * @module
 */
import { mkdir, open, readFile, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { MemoryUsageLedger, type UsageLedger, type UsageQuery, type UsageRecord, type UsageRow } from '@kosong/core/kernel';
import { DAY_MS, parseUsageLine, usageLine } from './usage-line.js';

/** What reading the file found: its records, and a warning per line that is not one (a torn last line, a damaged line). */
export interface UsageFileContents {
  readonly records: readonly UsageRecord[];
  readonly warnings: readonly string[];
}

/**
 * A {@link UsageLedger} in a JSONL file, shared by every kosong process of the user.
 *
 * - **Appends never interleave.** Each record is one `write(2)` of one whole line on a descriptor
 *   opened with `O_APPEND`, so the lines of processes appending at once stay whole (the kernel
 *   appends at the end atomically for each write on a local file system).
 * - **A crash costs at most the line being written.** A line cut short (a process killed mid-write)
 *   is skipped on read with a warning; the next process to append starts its first line on a line
 *   of its own, so the torn bytes never swallow a later record.
 * - The file is created with mode `0600` (its directory `0700`): it says which models you used, and when.
 * - Nothing is synced to disk per step: a power cut may lose the last records (a process crash does not).
 *
 * `record` returns a promise the kernel does not wait for (its failure goes to the kernel's hook
 * error sink); {@link UsageFileLedger.close} waits for the records still being written.
 */
export class UsageFileLedger implements UsageLedger {
  /** The descriptor, opened at the first record, and whether the file ended in the middle of a line then. */
  #file: Promise<{ readonly handle: FileHandle; tornEnd: boolean }> | undefined;
  readonly #writing = new Set<Promise<void>>();
  /** The last write: each waits for the one before it, so the lines are in the order of the records (writes in flight at once on one descriptor may land in any order). */
  #last: Promise<void> = Promise.resolve();
  #closed = false;

  /** @param path the JSONL file (made, with its directory, at the first record). */
  constructor(readonly path: string) {}

  record(record: UsageRecord): Promise<void> {
    if (this.#closed) return Promise.reject(new Error(`the usage ledger ${this.path} is closed`));
    const line = usageLine(record);
    const write = this.#last.then(() => this.#append(line), () => this.#append(line));
    this.#last = write;
    this.#writing.add(write);
    const done = (): void => void this.#writing.delete(write);
    write.then(done, done);
    return write;
  }

  async #append(line: string): Promise<void> {
    const file = await (this.#file ??= this.#open());
    // After a torn last line, this process's first line starts on a line of its own.
    const text = file.tornEnd ? `\n${line}` : line;
    file.tornEnd = false;
    const bytes = Buffer.from(text, 'utf8');
    const { bytesWritten } = await file.handle.write(bytes, 0, bytes.length);
    // A regular file takes a small write whole; were it cut short, the rest goes after it (the line is then not atomic).
    if (bytesWritten < bytes.length) await file.handle.write(bytes, bytesWritten, bytes.length - bytesWritten);
  }

  async #open(): Promise<{ readonly handle: FileHandle; tornEnd: boolean }> {
    await makeDirectory(dirname(this.path));
    const handle = await open(this.path, 'a+', 0o600);
    try {
      const { size } = await handle.stat();
      let tornEnd = false;
      if (size > 0) {
        const last = Buffer.alloc(1);
        await handle.read(last, 0, 1, size - 1);
        tornEnd = last[0] !== 0x0a;
      }
      return { handle, tornEnd };
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  /** Totals of the file's records, as `kernel.usage.query` gives them (`since` / `until` in whole UTC days). */
  async query(query: UsageQuery = {}): Promise<readonly UsageRow[]> {
    return (await loadUsageFile(this.path)).ledger.query(query);
  }

  /** A tenant's known spend from the UTC day holding `since` on, read from the file. */
  async spentUsd(tenant: string, since: number): Promise<number> {
    const { records } = await readUsageFile(this.path);
    const from = Math.floor(since / DAY_MS) * DAY_MS;
    let total = 0;
    for (const record of records) if (record.tenant === tenant && record.at >= from && record.costUsd !== undefined) total += record.costUsd;
    return total;
  }

  /**
   * Waits for the records being written (at most `waitMs`, default 5 s: a file system that hangs
   * does not hold the process), then closes the file. Later records are refused.
   */
  async close(waitMs = 5_000): Promise<void> {
    this.#closed = true;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs)));
    await Promise.race([Promise.allSettled([...this.#writing]), deadline]);
    clearTimeout(timer);
    const file = this.#file;
    this.#file = undefined;
    if (file !== undefined) await file.then((f) => f.handle.close(), () => undefined);
  }
}

/**
 * Makes `dir` (mode 0700) and, if they are missing, its parents. Not `mkdir(dir, { recursive: true })`
 * alone: on a file system that answers ENOENT to a directory that cannot be made there (`/proc`),
 * Node 20's recursive mkdir never settles.
 */
async function makeDirectory(dir: string): Promise<void> {
  const make = (): Promise<unknown> => mkdir(dir, { mode: 0o700 }).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'EEXIST') throw error;
  });
  try {
    await make();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || dirname(dir) === dir) throw error;
    await makeDirectory(dirname(dir));
    await make();
  }
}

/**
 * Reads a usage file: its records in order, and a warning for each line that is not a record (the
 * last line cut short by a crash, or a damaged line), skipped. A missing file has no records.
 *
 * @throws when the file exists and cannot be read (permissions, a directory).
 */
export async function readUsageFile(path: string): Promise<UsageFileContents> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { records: [], warnings: [] };
    throw error;
  }
  const lines = text.split('\n');
  const records: UsageRecord[] = [];
  const warnings: string[] = [];
  // The text after the last newline: empty, or a line a crash cut short.
  const unfinished = lines.pop()!;
  lines.forEach((line, index) => {
    if (line.trim() === '') return;
    const record = parseUsageLine(line);
    if (record === undefined) warnings.push(`${path}: line ${index + 1} is not a usage record (damaged?): skipped`);
    else records.push(record);
  });
  if (unfinished.trim() !== '') {
    warnings.push(`${path}: the last line (${lines.length + 1}) is cut short (a kosong process ended while writing it?): skipped`);
  }
  return { records, warnings };
}

/** The records of a usage file in a {@link MemoryUsageLedger} (to query it several ways), and the warnings of {@link readUsageFile}. */
export async function loadUsageFile(path: string): Promise<{ readonly ledger: MemoryUsageLedger; readonly warnings: readonly string[] }> {
  const { records, warnings } = await readUsageFile(path);
  const ledger = new MemoryUsageLedger();
  for (const record of records) ledger.record(record);
  return { ledger, warnings };
}
