import { Kernel, definePlugin, requireApproval, type ProviderPluginFactory } from '@kosong/core';
import { AgentWorker, RemoteToolset, ToolWorker } from '@kosong/bullmq';
import { builtinToolset } from './tools/builtin-tools.js';
import { UNSIGNED_APPROVALS_WARNING, approvalSecretFrom } from './approval-secret.js';

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
  /** What to tell its operator at start (approvals that are not signed). */
  readonly warnings: readonly string[];
  /** Lets running turns and tools finish (handing turns back to the queue after `deadlineMs`), then closes everything. */
  close(deadlineMs?: number): Promise<void>;
}

/**
 * Starts `kosong worker`: a tool worker serving the built-in tools (confined to this worker's working
 * directory) and an agent worker whose turns use the chosen provider and those tools through their
 * queue — so a turn's tool calls may run on any worker. Without `allowBash`, a turn's bash calls are
 * deferred: the turn ends with `stopReason: 'approval_required'`, and goes on when the decisions come
 * with `TurnQueue.resume` (`kosong --redis` asks its user, as a local session does), signed with
 * `KOSONG_APPROVAL_SECRET` when it is set (decisions not signed with it are refused); without it,
 * unsigned decisions are taken, and the worker warns about it.
 *
 * @throws Error for a `KOSONG_APPROVAL_SECRET` that is too short (before anything connects).
 */
export async function startWorker(options: WorkerCommandOptions): Promise<RunningWorker> {
  const approvalSecret = approvalSecretFrom(options.env);
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
  // The demo answers from each turn's history, so one provider serves every turn (see DemoChatProvider).
  await kernel.use(options.provider.create(options.env), definePlugin({ name: 'builtin-tools', setup: (ctx) => ctx.bindToolset(toolset) }));
  const agents = new AgentWorker({
    connection: options.redis,
    kernel,
    concurrency: options.concurrency,
    systemPrompt: options.systemPrompt,
    maxSteps: options.maxSteps,
    ...(approvalSecret === undefined ? {} : { approvalSecret }),
  });
  await agents.start();
  return {
    id: agents.id,
    warnings: approvalSecret === undefined && !options.allowBash ? [UNSIGNED_APPROVALS_WARNING] : [],
    async close(deadlineMs = 10_000) {
      await agents.close({ deadlineMs });
      await tools.close({ deadlineMs });
      await remote.close();
      await kernel.dispose();
    },
  };
}

