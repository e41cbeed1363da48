import { Kernel, definePlugin, requireApproval, type Plugin, type ProviderPluginFactory } from '@kosong/core';
import { AgentWorker, RemoteToolset, ToolWorker } from '@kosong/bullmq';
import { ScriptedEchoChatProvider } from '@kosong/provider-echo';
import { demoScripts } from './demo.js';
import { PerTurnProvider } from './per-turn-provider.js';
import { builtinToolset } from './tools/builtin-tools.js';

/** How `kosong worker` is set up. */
export interface WorkerCommandOptions {
  readonly redis: string;
  readonly provider: ProviderPluginFactory;
  readonly concurrency: number;
  readonly cwd: string;
  /** `--allow-bash`: bash calls run without asking; otherwise each waits for the approval of whoever submitted the turn. */
  readonly allowBash: boolean;
  readonly systemPrompt: string;
  readonly maxSteps: number;
  readonly env: Readonly<Record<string, string | undefined>>;
}

/** The name the built-in tools are served under (the toolset of turns run by `kosong worker`). */
export const BUILTIN_TOOLS = 'builtin';

/** A running `kosong worker`. */
export interface RunningWorker {
  /** This worker's id. */
  readonly id: string;
  /** Lets running turns and tools finish (handing turns back to the queue after `deadlineMs`), then closes everything. */
  close(deadlineMs?: number): Promise<void>;
}

/**
 * Starts `kosong worker`: a tool worker serving the built-in tools (confined to this worker's working
 * directory) and an agent worker whose turns use the chosen provider and those tools through their
 * queue — so a turn's tool calls may run on any worker. Without `allowBash`, a turn's bash calls are
 * deferred: the turn ends with `stopReason: 'approval_required'`, and goes on when the decisions come
 * with `TurnQueue.resume` (`kosong --redis` asks its user, as a local session does).
 */
export async function startWorker(options: WorkerCommandOptions): Promise<RunningWorker> {
  const tools = await ToolWorker.start({
    connection: options.redis,
    toolset: builtinToolset({ cwd: options.cwd, offerBash: true }),
    name: BUILTIN_TOOLS,
    concurrency: options.concurrency * 4,
  });
  const remote = await RemoteToolset.connect({ connection: options.redis, name: BUILTIN_TOOLS });
  const kernel = new Kernel();
  // No approval handler in this kernel: a bash call that needs approval is deferred to the turn's submitter.
  const toolset = options.allowBash ? remote : requireApproval(remote, ['bash']);
  await kernel.use(providerPlugin(options), definePlugin({ name: 'builtin-tools', setup: (ctx) => ctx.bindToolset(toolset) }));
  const agents = new AgentWorker({ connection: options.redis, kernel, concurrency: options.concurrency, systemPrompt: options.systemPrompt, maxSteps: options.maxSteps });
  await agents.start();
  return {
    id: agents.id,
    async close(deadlineMs = 10_000) {
      await agents.close({ deadlineMs });
      await tools.close({ deadlineMs });
      await remote.close();
      await kernel.dispose();
    },
  };
}

/** The provider's plugin; the demo plays its tour from the start on every turn, as it does locally. */
function providerPlugin(options: WorkerCommandOptions): Plugin {
  if (options.provider.name !== 'demo') return options.provider.create(options.env);
  const tour = new PerTurnProvider(() => new ScriptedEchoChatProvider(demoScripts(), { delayMs: 15 }));
  return definePlugin({ name: 'provider:demo', setup: (ctx) => ctx.bindChatProvider('demo', tour, { default: true }) });
}
