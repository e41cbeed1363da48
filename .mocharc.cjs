// Mocha's configuration. Mocha adds the spec files named on its command line to a `spec` list read
// from here, so that list is given only when the command line names none: `npx mocha` (and `npm
// test`) runs the whole suite, `npx mocha 'plugins/bullmq/lib/**/*.spec.js'` that package alone.
const ALL_SPECS = [
  'core/lib/**/*.spec.js',
  'providers/*/lib/**/*.spec.js',
  'toolsets/*/lib/**/*.spec.js',
  'plugins/*/lib/**/*.spec.js',
  'cli/lib/**/*.spec.js',
  'examples/lib/**/*.spec.js',
  'test/lib/**/*.spec.js',
  'bench/lib/**/*.spec.js',
];

/** Mocha options followed by a value that is not a spec file. */
const TAKES_VALUE = new Set(['--config', '--package', '--reporter', '-R', '--reporter-option', '--reporter-options', '-O', '--require', '-r', '--grep', '-g', '--fgrep', '-f', '--ui', '-u', '--timeout', '-t', '--slow', '-s', '--retries', '--jobs', '-j', '--file', '--ignore', '--exclude', '--extension', '--watch-files', '--watch-ignore', '--node-option', '-n']);

const args = process.argv.slice(2);
const namesSpecs = args.some((arg, i) => arg === '--spec' || arg.startsWith('--spec=') || (!arg.startsWith('-') && !TAKES_VALUE.has(args[i - 1] ?? '') && /\*|\.[cm]?js$/.test(arg)));

module.exports = {
  ...(namesSpecs ? {} : { spec: ALL_SPECS }),
  require: ['./test-support/fail-on-unhandled-rejection.mjs', './test-support/load-aware-timeouts.mjs', './test-support/exit-watchdog.mjs'],
  timeout: 10000,
  reporter: 'spec',
  forbidOnly: true,
  'node-option': ['expose-gc'],
};
