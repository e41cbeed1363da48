import type { InferOutput, OutputOption } from '../output/output-schema.js';
import type { ChatProvider } from '../provider/chat-provider.js';
import { step, type StepOptions } from '../runtime/step.js';
import type { StepResult } from '../runtime/step-result.js';
import { DEFAULT_MAX_HOOK_FAILURES } from '../runtime/defaults.js';
import { ContextWrappers } from '../runtime/hooks/context-wrappers.js';
import { HookBus } from '../runtime/hooks/hook-bus.js';
import { HookGuard, type HookErrorHandler } from '../runtime/hooks/hook-guard.js';
import { HookTable } from '../runtime/hooks/hook-table.js';
import { asNamedHooks, type NamedStepHooks, type RetryEvent, type StepEventContext, type StepHooks, type TurnScope } from '../runtime/hooks/step-hooks.js';
import type { ApprovalCallback } from '../tooling/approval.js';
import type { Toolset } from '../tooling/toolset.js';
import type { Admission, TenantGovernor } from '../governance/admission.js';
import type { Governance } from '../governance/governance.js';

/** What a runner resolved for one step. @internal */
export interface ResolvedStep {
  readonly provider: ChatProvider;
  readonly toolset: Toolset;
  /** Global hooks, then the tenant's, in registration order. */
  readonly hooks: readonly NamedStepHooks[];
  readonly onHookError: HookErrorHandler;
  /** The scope's `ApprovalHandler`, if one is bound. */
  readonly onApproval: ApprovalCallback | undefined;
  /** Step options the kernel was configured with. */
  readonly defaults: Pick<StepOptions, 'dispatch' | 'hookTimeoutMs' | 'cleanupTimeoutMs'>;
  /** Marks the step as running for its tenant; the returned function marks it done. */
  lease(): () => void;
  /** The scope's limits, read at each step (`governor` is `undefined` while it has none). */
  readonly limited: { readonly governor: TenantGovernor | undefined };
  /** Where the step's usage is recorded. */
  readonly governance: Governance;
}

/** Resolves what a step of a scope needs. @internal */
export type StepResolver = (tenant: string | undefined, provider: string | undefined) => ResolvedStep;

/**
 * Options of {@link StepRunner.step}: those of `step()` (see {@link StepOptions}) less what the kernel
 * resolves for the runner's scope (the provider, the toolset, the tenant, the hook-error handler).
 * `dispatch`, `hookTimeoutMs` and `cleanupTimeoutMs` left out are the kernel's (`KernelOptions`);
 * `onApproval` left out is the scope's `ApprovalHandler`, if one is bound.
 */
export interface RunnerStepOptions<S extends OutputOption | undefined = OutputOption | undefined>
  extends Omit<StepOptions<unknown, S>, RunnerResolved | 'hooks'> {
  /** Hooks for this step only, after the global and tenant hooks (bare `StepHooks` are named `step hooks #n`). */
  readonly hooks?: readonly (StepHooks | NamedStepHooks)[];
}

/** The step options a runner resolves for its scope: not among {@link RunnerStepOptions}. */
type RunnerResolved = 'provider' | 'toolset' | 'tenant' | 'onHookError';

/**
 * Runs steps for one scope (a tenant, or none) and one provider choice. Each step resolves its
 * provider, toolset and hooks when it starts, so it sees the kernel as it is then; a running step
 * keeps what it started with.
 *
 * It is also a service identifier: a plugin's class can `@inject(StepRunner)` to get a runner of the
 * scope it was created in (e.g. a summariser that calls the model itself).
 */
export class StepRunner {
  /** @internal Created by `kernel.runner()`. */
  constructor(
    private readonly resolve: StepResolver,
    /** The tenant this runner runs steps for, if any. */
    readonly tenant: string | undefined,
    /** The provider name asked for, if any (else the tenant's, else the default). */
    readonly providerName: string | undefined,
  ) {}

  /**
   * Tells this scope's hooks (`onRetry`) that the agent loop will retry the failed step `stepId`.
   * Guarded like every hook; never throws, never waits.
   */
  notifyRetry(fields: Omit<RetryEvent, Exclude<keyof StepEventContext, 'stepId' | 'context'>>): void {
    let resolved: ResolvedStep;
    try {
      resolved = this.resolve(this.tenant, this.providerName);
    } catch {
      return; // the tenant or provider is gone: the retry itself will report that
    }
    const { stepId, context: runContext, ...rest } = fields;
    const guard = HookGuard.forStep(stepId, { tenant: this.tenant, provider: resolved.provider, onHookError: resolved.onHookError, hookTimeoutMs: resolved.defaults.hookTimeoutMs });
    const context = { stepId, tenant: this.tenant, provider: resolved.provider.name, model: resolved.provider.modelName, context: runContext };
    new HookBus(guard, resolved.hooks, context).retry(rest);
  }

  /**
   * Runs an agent turn inside the `runInContext` hooks of this scope (see `StepHooks.runInContext`),
   * with the scope's tenant, provider and model filled in. Guarded like every hook; runs `run` as
   * it is when no hook has `runInContext` (or the scope cannot be resolved: the turn's first step
   * will report why).
   */
  runTurn<T>(turn: TurnScope, run: () => T): T {
    let resolved: ResolvedStep;
    try {
      resolved = this.resolve(this.tenant, this.providerName);
    } catch {
      return run();
    }
    const { provider } = resolved;
    const guard = HookGuard.forStep(turn.turnId, { tenant: this.tenant, provider, onHookError: resolved.onHookError, hookTimeoutMs: resolved.defaults.hookTimeoutMs });
    const wrappers = ContextWrappers.of(
      resolved.hooks,
      (plugin, kind, error, detached) => guard.reportFailure(plugin, 'runInContext', kind, error, detached),
      DEFAULT_MAX_HOOK_FAILURES,
    );
    if (!wrappers) return run();
    return wrappers.run(Object.freeze({ ...turn, tenant: this.tenant, provider: provider.name, model: provider.modelName }), run);
  }

  /** The provider the next step would use. */
  get provider(): ChatProvider {
    return this.resolve(this.tenant, this.providerName).provider;
  }

  /**
   * Runs one step (see `step()`), with the provider, toolset and hooks of this runner's scope.
   *
   * Which methods the scope's hooks objects have is read when the kernel resolves the scope's hooks
   * (cached, like the hooks themselves, until the next `use` or a redefinition of the tenant), not at
   * every step: a method added to or replaced on a bound hooks object afterwards is not seen. Hooks
   * given in `options.hooks` are read per step.
   *
   * For a tenant with limits (`TenantLimits`), the step is admitted before its request: it may
   * wait for a place and for its pacing (bounded by `options.signal` and the limits' `maxWaitMs`),
   * and each tool call for a place under `maxConcurrentToolCalls`. When the step has ended with a
   * `TokenUsage`, it is recorded in the kernel's usage ledger (`kernel.usage`), limits or not.
   *
   * @throws {UnknownTenantError} if the tenant was removed (also while the step was queued);
   * {@link UnknownProviderError} if the provider is not registered; {@link TenantLimitError} over
   * a pacing or concurrency limit it may not wait for; {@link TenantBudgetExceededError} over the
   * tenant's budget; the signal's reason if it aborts while the step is queued; otherwise as `step()`.
   */
  async step<S extends OutputOption | undefined = undefined>(options: RunnerStepOptions<S>): Promise<StepResult<InferOutput<S>>> {
    const resolved = this.resolve(this.tenant, this.providerName);
    const governor = resolved.limited.governor;
    if (governor !== undefined) return this.#limitedStep(resolved, governor, options);
    const release = resolved.lease();
    try {
      const result = await step<unknown, S>(this.#stepOptions(resolved, options, release, resolved.toolset));
      resolved.governance.record(this.tenant, resolved.provider, result.usage, result.stepId, resolved.onHookError);
      return result;
    } catch (error) {
      release(); // the cleanup already ran on every failure path; this only guards a throw before the step began
      throw error;
    }
  }

  /**
   * A step of a tenant with limits: admitted first (a place under its caps, its pacing, its
   * budget: see `TenantLimits`), with its tool calls held to the tenant's cap. A resumed step makes
   * no model request: only its tool calls are held.
   */
  async #limitedStep<S extends OutputOption | undefined>(resolved: ResolvedStep, governor: TenantGovernor, options: RunnerStepOptions<S>): Promise<StepResult<InferOutput<S>>> {
    const release = resolved.lease();
    let admission: Admission | undefined;
    try {
      if (options.resume === undefined) {
        const admitted = governor.admit({
          provider: resolved.provider,
          systemPrompt: options.systemPrompt,
          tools: resolved.toolset.tools,
          history: options.history,
          signal: options.signal,
        });
        admission = admitted instanceof Promise ? await admitted : admitted;
      }
      const result = await step<unknown, S>(this.#stepOptions(resolved, options, release, governor.toolset(resolved.toolset)));
      admission?.end(result.usage);
      resolved.governance.record(this.tenant, resolved.provider, result.usage, result.stepId, resolved.onHookError);
      return result;
    } catch (error) {
      admission?.end(undefined);
      release();
      throw error;
    }
  }

  #stepOptions<S extends OutputOption | undefined>(resolved: ResolvedStep, options: RunnerStepOptions<S>, release: () => void, toolset: Toolset): StepOptions<unknown, S> {
    const perCall = options.hooks === undefined ? [] : options.hooks.map((hooks, i) => asNamedHooks(hooks, `step hooks #${i + 1}`));
    perCall.push({ name: 'kosong.kernel', hooks: { onCleanup: release } });
    return {
      ...resolved.defaults,
      ...options,
      provider: resolved.provider,
      toolset,
      ...(this.tenant === undefined ? {} : { tenant: this.tenant }),
      // The scope's hooks are read once (per resolution), not per step: the step gets their table with the list.
      hooks: HookTable.join(resolved.hooks, perCall),
      onHookError: resolved.onHookError,
      ...(options.onApproval === undefined && resolved.onApproval !== undefined ? { onApproval: resolved.onApproval } : {}),
    };
  }
}
