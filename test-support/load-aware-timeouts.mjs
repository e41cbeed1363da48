// Mocha root hooks: every timeout of the suite (mocha's own, per test and per hook, and the waits of
// the harnesses that read KOSONG_TEST_TIMEOUT_SCALE) stretches with the machine's load, so a test
// that fits its budget on an idle machine does not fail on a loaded one (CI: 2 cores shared with the
// suite's own child processes and servers). A test that hangs still fails, only later (4x at most).
//
// The scale is KOSONG_TEST_TIMEOUT_SCALE when set before the run (a fixed number >= 1); otherwise
// the 1-minute load average per CPU, between 1 and MAX_SCALE, in half steps, read again before each
// test and published in KOSONG_TEST_TIMEOUT_SCALE for the harnesses.
import { availableParallelism, loadavg } from 'node:os';

const MAX_SCALE = 4;
/** Mocha's largest timeout; it takes this one and above as "no timeout". */
const MAX_TIMEOUT_MS = 2 ** 31 - 2;
const fixed = Number(process.env.KOSONG_TEST_TIMEOUT_SCALE);
const fixedScale = Number.isFinite(fixed) && fixed >= 1 ? fixed : undefined;

function currentScale() {
  if (fixedScale !== undefined) return fixedScale;
  const perCpu = loadavg()[0] / availableParallelism();
  return Math.min(MAX_SCALE, Math.max(1, Math.ceil(perCpu * 2) / 2));
}

/** Each runnable's timeout as its spec set it, before any scaling. */
const baseTimeouts = new WeakMap();
let applied;

function scaleRunnable(runnable, scale) {
  if (!baseTimeouts.has(runnable)) baseTimeouts.set(runnable, runnable.timeout());
  const base = baseTimeouts.get(runnable);
  if (base === 0) return; // no timeout
  // Only the value, which mocha reads when the runnable starts: Runnable#timeout(ms) would also
  // restart the (cleared, but kept) timer of a test or hook that has already run, which then fires
  // later as a second, false outcome of it ("done() called multiple times").
  runnable._timeout = Math.min(MAX_TIMEOUT_MS, Math.round(base * scale));
}

function scaleTree(suite, scale) {
  for (const hook of [...suite._beforeAll, ...suite._beforeEach, ...suite._afterEach, ...suite._afterAll]) scaleRunnable(hook, scale);
  for (const test of suite.tests) scaleRunnable(test, scale);
  for (const child of suite.suites) scaleTree(child, scale);
}

function rootOf(runnable) {
  let suite = runnable.parent;
  while (suite.parent) suite = suite.parent;
  return suite;
}

/** Publishes the current scale and, when it changed, applies it to every test and hook. */
function refresh(runnable) {
  const scale = currentScale();
  process.env.KOSONG_TEST_TIMEOUT_SCALE = String(scale);
  if (scale === applied) return;
  applied = scale;
  scaleTree(rootOf(runnable), scale); // a runnable running now keeps the timeout it started with
}

export const mochaHooks = {
  beforeAll() {
    refresh(this.test);
  },
  beforeEach() {
    refresh(this.currentTest);
  },
};
