import { Kernel, definePlugin, requireApproval, type ProviderPluginFactory } from '@kosong/core';
import { AgentWorker, RedisGovernance, RedisUsageLedger, RemoteToolset, ToolWorker } from '@kosong/bullmq';
import { builtinToolset } from './tools/builtin-tools.js';
import { EDIT_TOOL_NAMES } from './tools/file-edits.js';
import { UNSIGNED_APPROVALS_WARNING, approvalSecretFrom } from './approval-secret.js';

/** How `kosong worker` is set up. */
export interface WorkerCommandOptions {
  readonly redis: string;
  readonly provider: ProviderPluginFactory;
  readonly concurrency: number;
  readonly cwd: string;
  /** `--allow-bash`: bash calls run without asking; otherwise each waits for the approval of whoever submitted the turn. */
  readonly allowBash: boolean;
  /** `--allow-edits`: the turns' `write_file` and `edit_file` calls run without an approval. */
  readonly allowEdits?: boolean;
  readonly systemPrompt: string;
  readonly maxSteps: number;
  readonly env: Readonly<Record<string, string | undefined>>;
  /**
   * `--config`'s tenants: the tenants whose turns this worker runs, with their limits (`TenantLimits`
   * of `@kosong/core/kernel`, checked at start). With any limits, they are counted in Redis
   * (`RedisGovernance`): every worker of the Redis given the same tenants holds each of them to its
   * limits together. Turns of a tenant not listed fail with `UnknownTenantError`.
   */
  readonly tenants?: WorkerConfig['tenants'];
}

/** What `kosong worker --config <file>` reads: a JSON object of tenants and their limits. */
export interface WorkerConfig {
  /** Per tenant: its limits (`TenantLimits`: pacing, caps, budget), or none (`{}`). */
  readonly tenants?: Readonly<Record<string, { readonly limits?: Readonly<Record<string, unknown>> }>>;
}

/**
 * Parses `kosong worker --config`'s file (`file` names it in errors).
 * @throws Error naming the file: not JSON, not an object, a key other than `tenants`, a tenant that
 * is not `{ "limits": { … } }` (the limits themselves are checked when the tenant is defined).
 */
export function parseWorkerConfig(text: string, file: string): WorkerConfig {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new Error(`--config ${file}: not JSON (${(error as Error).message})`, { cause: error });
  }
  const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (!isObject(parsed)) throw new Error(`--config ${file}: must be a JSON object ({ "tenants": { … } })`);
  for (const key of Object.keys(parsed)) if (key !== 'tenants') throw new Error(`--config ${file}: unknown key "${key}" (kosong worker reads: tenants)`);
  const tenants = parsed.tenants;
  if (tenants === undefined) return {};
  if (!isObject(tenants)) throw new Error(`--config ${file}: tenants must be an object ({ "<id>": { "limits": { … } } })`);
  for (const [id, tenant] of Object.entries(tenants)) {
    if (!isObject(tenant) || Object.keys(tenant).some((key) => key !== 'limits') || (tenant.limits !== undefined && !isObject(tenant.limits))) {
      throw new Error(`--config ${file}: tenant "${id}" must be { "limits": { … } } (no other key)`);
    }
  }
  return { tenants: tenants as NonNullable<WorkerConfig['tenants']> };
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
  const tenants = Object.entries(options.tenants ?? {});
  // Limits are counted in Redis, as every worker of it counts them; every step is recorded in the
  // Redis usage ledger (`kosong usage --redis`), with limits or without.
  const governance = tenants.some(([, tenant]) => tenant.limits !== undefined) ? new RedisGovernance({ connection: options.redis }) : undefined;
  const ledger = governance?.usageLedger ?? new RedisUsageLedger({ connection: options.redis });
  const kernel = new Kernel(governance === undefined ? { usageLedger: ledger } : governance.kernelOptions);
  const closeGovernance = async (): Promise<void> => {
    await kernel.dispose();
    await (governance === undefined ? ledger.close() : governance.close());
  };
  try {
    for (const [id, tenant] of tenants) kernel.tenants.define(id, tenant.limits === undefined ? {} : { limits: tenant.limits });
  } catch (error) {
    await closeGovernance();
    await remote.close();
    await tools.close({ deadlineMs: 0 });
    throw error;
  }
  // No approval handler in this kernel: a call that needs approval (bash, a file change) is deferred to
  // the turn's submitter. The tool workers' own approval rules do not reach here (a remote toolset
  // has none), so the gated tools are named.
  const gated = [...(options.allowBash ? [] : ['bash']), ...(options.allowEdits === true ? [] : EDIT_TOOL_NAMES)];
  const toolset = gated.length === 0 ? remote : requireApproval(remote, gated);
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
    warnings: approvalSecret === undefined && gated.length > 0 ? [UNSIGNED_APPROVALS_WARNING] : [],
    async close(deadlineMs = 10_000) {
      await agents.close({ deadlineMs });
      await tools.close({ deadlineMs });
      await remote.close();
      await closeGovernance();
    },
  };
}

