// Mocha root hook: the test run never hangs. Mocha runs without --exit, so a server, socket, child
// process or timer that a spec left open keeps the process alive after the last test, for ever when
// it is a client reconnecting to a server already stopped. Once every test and hook has run, this
// waits GRACE_MS (times KOSONG_TEST_TIMEOUT_SCALE) for the process to exit on its own; if it has
// not, it prints what is still open and exits with code 1 (or the failure count), so the leak is
// reported and fixed rather than hidden (as --exit would hide it) or left to a CI timeout.
const GRACE_MS = 20_000;

/** What keeps the event loop alive, as precisely as Node tells. */
function describeOpenHandles() {
  const lines = [`open resources: ${process.getActiveResourcesInfo().join(', ') || 'none'}`];
  for (const handle of process._getActiveHandles()) {
    const name = handle?.constructor?.name ?? typeof handle;
    if (name === 'ChildProcess') lines.push(`  child process ${handle.pid}: ${handle.spawnargs.join(' ')}`);
    else if (name === 'Socket' && handle.remotePort !== undefined) lines.push(`  socket to ${handle.remoteAddress}:${handle.remotePort}`);
    else if (name === 'Server') lines.push(`  server listening on ${JSON.stringify(handle.address())}`);
    else if (handle === process.stdout || handle === process.stderr || handle === process.stdin) continue;
    else if (name === 'Socket') lines.push('  a pipe (a child process\'s stdio, or an IPC channel)');
    else lines.push(`  ${name}`);
  }
  return lines.join('\n');
}

export const mochaHooks = {
  afterAll() {
    const scale = Number(process.env.KOSONG_TEST_TIMEOUT_SCALE) || 1;
    const graceMs = GRACE_MS * scale;
    const watchdog = setTimeout(() => {
      process.stderr.write(`\nThe test run finished ${graceMs / 1000} s ago, but something a spec started is still open:\n${describeOpenHandles()}\n`);
      // Children would outlive the run (a redis-server, a worker): they go with it.
      for (const handle of process._getActiveHandles()) if (handle?.constructor?.name === 'ChildProcess') handle.kill('SIGKILL');
      // Mocha sets the exit code (its failure count) in an 'exit' listener of its own: a leak is a
      // failure even when every test passed.
      process.on('exit', () => {
        process.exitCode = Number(process.exitCode) || 1;
      });
      process.exit(1);
    }, graceMs);
    watchdog.unref(); // it never keeps the process alive itself
  },
};
