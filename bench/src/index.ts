/**
 * `@kosong/bench`: the benchmark suites of kosong and the harness that runs them (`npm run bench`).
 *
 * @packageDocumentation
 */
export type { ChildReport, PreparedVariant, Suite, Target, VariantEntry, VariantModule } from './harness.js';
export { findSuite, suites } from './suites/index.js';
export { median } from './stats.js';
