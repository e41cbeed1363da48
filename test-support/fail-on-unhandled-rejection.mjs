// Mocha root hooks: the test run fails on any unhandled promise rejection, attributed to the test
// during (or just after) which it happened. The library never installs process handlers itself.
const unhandled = [];
process.on('unhandledRejection', (reason) => {
  unhandled.push(reason);
});

function check() {
  if (unhandled.length === 0) return;
  const reasons = unhandled.splice(0);
  const text = reasons.map((r) => (r instanceof Error ? r.stack ?? r.message : String(r))).join('\n---\n');
  throw new Error(`unhandled promise rejection(s) during this test:\n${text}`);
}

export const mochaHooks = {
  async afterEach() {
    // Rejections are reported after the microtask queue drains: give them a turn to surface.
    await new Promise((resolve) => setImmediate(resolve));
    check();
  },
  async afterAll() {
    await new Promise((resolve) => setImmediate(resolve));
    check();
  },
};
