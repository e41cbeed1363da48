/**
 * Counters of what a variant sends to its store, installed once per measuring process and on every
 * variant of a kind alike: Redis round trips (every ioredis client of the process) and file appends
 * and syncs (every `FileHandle`).
 *
 * @module
 */
import { open, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Redis } from 'ioredis';

/** Counts of one kind, monotonically growing; take differences. */
export interface Counts {
  /** Redis: commands written to a socket (pipelined ones included, one each). */
  commands: number;
  /** Redis: round trips (a command on its own, or a whole pipeline / `MULTI` block). */
  roundTrips: number;
  /** Redis: commands by name (lower case). */
  readonly byName: Map<string, number>;
  /** Files: `FileHandle.write` calls. */
  writes: number;
  /** Files: `FileHandle.datasync` calls (the history's fsyncs). */
  syncs: number;
}

/** The counters of this process. */
export const counts: Counts = { commands: 0, roundTrips: 0, byName: new Map(), writes: 0, syncs: 0 };

/** A copy of the scalar counts, to subtract later. */
export function snapshot(): Omit<Counts, 'byName'> & { readonly byName: ReadonlyMap<string, number> } {
  return { commands: counts.commands, roundTrips: counts.roundTrips, writes: counts.writes, syncs: counts.syncs, byName: new Map(counts.byName) };
}

interface CommandLike {
  readonly name: string;
}

let redisCounted = false;

/**
 * Counts what every ioredis client of this process sends, by wrapping `Redis.prototype.sendCommand`:
 * a command sent on its own is one round trip; commands of one pipeline (ioredis hands each one with
 * the pipeline's collecting stream, written in one go) make one round trip together. Install it
 * before any client connects (commands queued offline are sent again on connect, and would count twice).
 */
export function countRedisCommands(): void {
  if (redisCounted) return;
  redisCounted = true;
  const proto = Redis.prototype as unknown as { sendCommand(command: CommandLike, stream?: object): unknown };
  const original = proto.sendCommand;
  const pipelines = new WeakSet<object>();
  proto.sendCommand = function sendCommand(this: unknown, command: CommandLike, stream?: object) {
    counts.commands++;
    counts.byName.set(command.name, (counts.byName.get(command.name) ?? 0) + 1);
    if (stream === undefined) counts.roundTrips++;
    else if (!pipelines.has(stream)) {
      pipelines.add(stream);
      counts.roundTrips++;
    }
    return original.call(this, command, stream);
  };
}

let filesCounted = false;

/** Counts `FileHandle.write` and `FileHandle.datasync` calls of this process (the prototype, found through a scratch file in `dir`). */
export async function countFileWrites(dir: string): Promise<void> {
  if (filesCounted) return;
  filesCounted = true;
  const scratch = join(dir, 'scratch');
  const handle = await open(scratch, 'w');
  const proto = Object.getPrototypeOf(handle) as { write(...args: unknown[]): unknown; datasync(...args: unknown[]): unknown };
  await handle.close();
  await rm(scratch, { force: true });
  const { write, datasync } = proto;
  proto.write = function (this: unknown, ...args: unknown[]) {
    counts.writes++;
    return write.apply(this, args);
  };
  proto.datasync = function (this: unknown, ...args: unknown[]) {
    counts.syncs++;
    return datasync.apply(this, args);
  };
}
