/**
 * Every benchmark suite, by name. Add a suite here (e.g. kernel `runner.step` vs bare `step()`, or an
 * HTTP provider against a local server) and `npm run bench` runs it.
 *
 * @module
 */
import type { Suite } from '../harness.js';
import { aiSdkSuite } from './ai-sdk/index.js';
import { anthropicSuite } from './anthropic/index.js';
import { argumentsSuite } from './arguments/index.js';
import { coldStartSuite } from './cold-start/index.js';
import { concurrentSuite } from './concurrent/index.js';
import { distributedSuite } from './distributed/index.js';
import { eventsSuite } from './events/index.js';
import { geminiSuite } from './gemini/index.js';
import { governanceSuite } from './governance/index.js';
import { growthSuite } from './growth/index.js';
import { kernelSuite } from './kernel/index.js';
import { ledgerSuite } from './ledger/index.js';
import { mcpSuite } from './mcp/index.js';
import { openAISuite } from './openai/index.js';
import { openAIResponsesSuite } from './openai-responses/index.js';
import { otelSuite } from './otel/index.js';
import { serverSuite } from './server/index.js';
import { smallSuite } from './small/index.js';
import { stepSuite } from './step/index.js';

export const suites: readonly Suite[] = [
  stepSuite,
  growthSuite,
  smallSuite,
  concurrentSuite,
  eventsSuite,
  coldStartSuite,
  kernelSuite,
  otelSuite,
  openAISuite,
  openAIResponsesSuite,
  anthropicSuite,
  geminiSuite,
  argumentsSuite,
  distributedSuite,
  ledgerSuite,
  aiSdkSuite,
  governanceSuite,
  serverSuite,
  mcpSuite,
];

/** The suite called `name`; throws if there is none. */
export function findSuite(name: string): Suite {
  const suite = suites.find((s) => s.name === name);
  if (!suite) throw new Error(`unknown suite "${name}" (known: ${suites.map((s) => s.name).join(', ')})`);
  return suite;
}
