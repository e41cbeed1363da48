/**
 * `@kosong/bullmq/testing`: what the tests and benchmarks of a fleet use — a real `redis-server` on a
 * free port, worker processes, and a model driven by the history that any worker can take over.
 *
 * @packageDocumentation
 */
export { RedisServer, freePort, type RedisServerOptions } from './redis-server.js';
export { TestProcess } from './test-process.js';
export { PlanProvider, planInput, PLAN_STEP_USAGE, type Plan, type PlannedCall } from './plan-provider.js';
