/**
 * The `cold-start` suite: what starting a process that uses kosong costs, whole processes against
 * `node -e 0` — importing the package root (with the kernel), the runtime entry, starting the CLI —
 * next to importing peers (the AI SDK, the OpenAI Agents SDK, LangChain's core, from `bench/peers`).
 *
 * @module
 */
import { fileURLToPath } from 'node:url';
import type { Suite, VariantEntry } from '../../harness.js';
import { PEERS_DIR } from '../../peers.js';
import type { ColdCommand } from './variants.js';

const REPO_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
/** The `kosong` command as users run it: the bin, which runs the bundle `npm run build` makes (`cli/dist`). */
const CLI = fileURLToPath(new URL('../../../../cli/bin/kosong.js', import.meta.url));

/** `node --input-type=module -e <code>` in `cwd`. */
function esm(code: string, cwd: string = REPO_ROOT): ColdCommand {
  return { args: ['--input-type=module', '-e', code], cwd };
}

function variant(name: string, description: string, command: ColdCommand, fromPeers = false): VariantEntry {
  return { name, description, load: async () => ({ prepare: async () => (await import('./variants.js')).prepareCommand(command) }), fromPeers };
}

export const coldStartSuite: Suite = {
  name: 'cold-start',
  title: 'Cold start: whole processes',
  workload:
    'one whole Node process per timed run (the Node that runs the suite), from spawn to exit; 1 warm-up start per measuring process. ' +
    'The module counts come from one more start with a counter preloaded (ES modules through a loader hook, CommonJS from the require cache)',
  baseline: 'node',
  variants: [
    variant('node', '`node -e 0`: the floor', { args: ['-e', '0'], cwd: REPO_ROOT }),
    variant('core', "`import '@kosong/core'`: the package root (message model, runtime, kernel, agent)", esm("import '@kosong/core';")),
    variant('kernel', "`import { Kernel } from '@kosong/core'` and `new Kernel()`", esm("import { Kernel } from '@kosong/core'; new Kernel();")),
    variant('runtime', "`import { step } from '@kosong/core/runtime'`: the step runtime alone", esm("import { step } from '@kosong/core/runtime'; if (typeof step !== 'function') throw new Error('no step');")),
    variant('cli-help', '`kosong --help` (the bin, running the bundle)', { args: [CLI, '--help'], cwd: REPO_ROOT, expect: /Usage: kosong/ }),
    variant('cli-echo-run', "`kosong -p echo run 'text: hi'`: one offline turn", { args: [CLI, '-p', 'echo', 'run', 'text: hi'], cwd: REPO_ROOT, expect: /hi/ }),
    variant('ai', "`import 'ai'` (ai 7, from bench/peers)", esm("import 'ai';", PEERS_DIR), true),
    variant('openai-agents', "`import '@openai/agents'` (0.20, from bench/peers)", esm("import '@openai/agents';", PEERS_DIR), true),
    variant(
      'langchain',
      "`@langchain/core` (1.4, from bench/peers): `language_models/chat_models`, `messages` and `tools`, what a tool-calling step needs",
      esm("import '@langchain/core/language_models/chat_models'; import '@langchain/core/messages'; import '@langchain/core/tools';", PEERS_DIR),
      true,
    ),
  ],
  inProcess: false,
  metrics: [
    { key: 'esModules', label: 'ES modules', decimals: 0 },
    { key: 'cjsModules', label: 'CommonJS modules', decimals: 0 },
  ],
  comparisons: [['core', 'ai']],
  targets: [
    { variant: 'core', baseline: 'ai', maxRatio: 1 },
    { variant: 'runtime', baseline: 'node', maxRatio: 1.5 },
    { variant: 'cli-help', baseline: 'node', maxRatio: 2 },
    { variant: 'cli-echo-run', baseline: 'node', maxRatio: 3 },
  ],
};
