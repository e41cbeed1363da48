import { readdirSync, readFileSync } from 'node:fs';

/**
 * The processes whose environment holds `name=value` (as they were started: `/proc/<pid>/environ`),
 * other than this one. A variable set for a command is inherited by everything it starts, also by
 * processes that leave its process group or session (`setsid`, daemons), so this finds what a
 * process-group kill misses. Linux only: elsewhere (no `/proc`) the list is empty. Processes of other
 * users, and those that cleared their environment, are not found.
 */
export function markedProcesses(name: string, value: string): number[] {
  const marker = Buffer.from(`${name}=${value}\0`);
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const found: number[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (pid === process.pid) continue;
    let environ: Buffer;
    try {
      environ = readFileSync(`/proc/${entry}/environ`);
    } catch {
      continue; // gone, or not ours
    }
    if (environ.subarray(0, marker.length).equals(marker) || environ.includes(Buffer.concat([Buffer.from('\0'), marker]))) found.push(pid);
  }
  return found;
}

/** Sends `signal` to every {@link markedProcesses marked process}; returns how many there were. */
export function signalMarkedProcesses(name: string, value: string, signal: NodeJS.Signals): number {
  const pids = markedProcesses(name, value);
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      // gone already
    }
  }
  return pids.length;
}
