/**
 * The admission of a tenant's steps and tool calls: its caps, its pacing, its budget.
 *
 * @module
 */
import type { Message } from '../message/message.js';
import type { ToolCall } from '../message/parts.js';
import type { ChatProvider } from '../provider/chat-provider.js';
import { totalTokens, type TokenUsage } from '../provider/token-usage.js';
import type { Tool } from '../tooling/tool.js';
import type { ToolResult } from '../tooling/tool-result.js';
import type { ToolContext, Toolset } from '../tooling/toolset.js';
import { ConcurrencyGate } from './concurrency-gate.js';
import type { CapGate, CapKind, LimitStore, Pacer, PaceKind, StepGrant } from './limit-store.js';
import { TenantBudgetExceededError, TenantLimitError, type TenantLimitName } from './limit-errors.js';
import type { Pricing } from './pricing.js';
import { RatePacer, type PaceRefusal } from './rate-pacer.js';
import { DEFAULT_LIMIT_MAX_WAIT_MS, validateTenantLimits, type TenantBudget, type TenantLimits } from './tenant-limits.js';
import { estimateRequestTokens } from './token-estimate.js';
import { MemoryUsageLedger, periodOf, type UsageLedger } from './usage-ledger.js';

/** What a governor needs of the kernel. @internal */
export interface GovernorHost {
  readonly ledger: UsageLedger;
  readonly pricing: Pricing;
  /** Where caps and pacing are counted (`undefined`: in memory, this process). */
  readonly limitStore: LimitStore | undefined;
}

/** A step's request, as admission reads it. @internal */
export interface AdmissionRequest {
  readonly provider: ChatProvider;
  readonly systemPrompt: string;
  readonly tools: readonly Tool[];
  readonly history: readonly Message[];
  readonly signal: AbortSignal | undefined;
}

/** An admitted step: end it once, when the step settles. @internal */
export interface Admission {
  /** The step settled: gives its place back, and corrects the tokens counted with its real usage (if known). */
  end(usage: TokenUsage | undefined): void;
}

/**
 * Holds one tenant to its limits: a FIFO concurrency gate for its steps and one for its tool calls,
 * a pacer for its requests and one for its tokens, its budget. Its limits can change at any time;
 * the next admission reads them. A running step keeps the place it holds. @internal
 */
export class TenantGovernor {
  #limits: TenantLimits;
  #steps: CapGate | undefined;
  #toolCalls: CapGate | undefined;
  #requests: Pacer | undefined;
  #tokens: Pacer | undefined;
  /** Counted in this process (no shared store): a gate answers `tryAcquire` synchronously. */
  readonly #local: boolean;
  readonly #toolsets = new WeakMap<Toolset, Toolset>();
  /** The budget's period as last computed (recomputed once it is over). */
  #period: { readonly per: TenantBudget['per']; readonly start: number; readonly end: number } | undefined;
  #closed: unknown;
  /** Aborted by {@link TenantGovernor.close}: ends the pacing waits. */
  readonly #closing = new AbortController();

  constructor(
    readonly tenant: string,
    limits: TenantLimits,
    private readonly host: GovernorHost,
  ) {
    this.#limits = limits;
    this.#local = host.limitStore === undefined;
    this.setLimits(limits);
  }

  get limits(): TenantLimits {
    return this.#limits;
  }

  /** Steps running now (holding a place). */
  get runningSteps(): number {
    return this.#steps?.active ?? 0;
  }

  /** Steps waiting in the queue. */
  get queuedSteps(): number {
    return this.#steps?.waiting ?? 0;
  }

  /** Tool calls running now. */
  get runningToolCalls(): number {
    return this.#toolCalls?.active ?? 0;
  }

  /**
   * New limits, from the next admission on. A gate's new cap applies at once to its queue (more
   * room lets queued steps in, in order); running steps keep their places; a pacer keeps what its
   * current window counted.
   */
  setLimits(limits: TenantLimits): void {
    this.#apply(limits);
    // Shared with every process of the store: the last limits given anywhere hold everywhere.
    this.host.limitStore?.shareLimits?.(this.tenant, limits);
  }

  /** The version of the shared limits applied last (0: none). */
  #sharedVersion = 0;

  /**
   * Applies the tenant's shared limits if the store knows a newer version than the one applied:
   * `true` if it did. @throws TypeError for shared limits that are not valid limits.
   */
  #syncShared(): boolean {
    const shared = this.host.limitStore?.sharedLimits?.(this.tenant);
    if (shared === undefined || shared.version <= this.#sharedVersion) return false;
    const limits = validateTenantLimits(`the shared limits of tenant "${this.tenant}" (version ${shared.version})`, shared.limits) ?? {};
    this.#sharedVersion = shared.version;
    this.#apply(limits);
    return true;
  }

  #apply(limits: TenantLimits): void {
    this.#limits = limits;
    const { maxConcurrentSteps, maxConcurrentToolCalls, requestsPerMinute, tokensPerMinute } = limits;
    if (this.#steps) this.#steps.setCap(maxConcurrentSteps);
    else if (maxConcurrentSteps !== undefined) this.#steps = this.#gate('steps', maxConcurrentSteps);
    if (this.#toolCalls) this.#toolCalls.setCap(maxConcurrentToolCalls);
    else if (maxConcurrentToolCalls !== undefined) this.#toolCalls = this.#gate('toolCalls', maxConcurrentToolCalls);
    this.#requests = this.#pacer(this.#requests, requestsPerMinute, 'requests');
    this.#tokens = this.#pacer(this.#tokens, tokensPerMinute, 'tokens');
  }

  /** A gate of the store (in memory without one). */
  #gate(kind: CapKind, cap: number): CapGate {
    const store = this.host.limitStore;
    return store === undefined ? new ConcurrencyGate(cap) : store.capGate(this.tenant, kind, cap);
  }

  /** The pacer of `kind` with limit `max` (kept, with its window, when the limit changes), or none. */
  #pacer(current: Pacer | undefined, max: number | undefined, kind: PaceKind): Pacer | undefined {
    if (max === undefined) return undefined;
    if (current !== undefined) {
      current.setMax(max);
      return current;
    }
    const store = this.host.limitStore;
    return store === undefined ? new RatePacer(max, `${this.tenant}:${kind}`) : store.pacer(this.tenant, kind, max);
  }

  /**
   * Rejects every queued step and tool call (and every later one) with `reason`: the tenant was
   * removed. Running ones finish.
   */
  close(reason: unknown): void {
    this.#closed = reason;
    this.#closing.abort(reason);
    this.#steps?.close(reason);
    this.#toolCalls?.close(reason);
  }

  /**
   * Admits a step: a place under `maxConcurrentSteps` (queued in order), then its request under
   * `requestsPerMinute` and its estimated tokens under `tokensPerMinute`, then its budget (read last,
   * so a step that waited sees what the steps before it spent). Waits (policy `'wait'`) at most
   * `maxWaitMs` in all, and no longer than the signal allows; a refusal gives back what was taken.
   *
   * @throws {TenantLimitError} over a limit it may not (or could not in time) wait for;
   * {@link TenantBudgetExceededError} over the budget (or for a model without a price); the signal's reason.
   * (Synchronously admitted, with no promise, when the tenant has only caps and they have room.)
   */
  admit(request: AdmissionRequest): Admission | Promise<Admission> {
    // In memory, with room under every limit now: admitted at once, without a promise.
    if (this.#local && this.#closed === undefined && request.signal?.aborted !== true) {
      const admitted = this.#admitNow(request);
      if (admitted !== undefined) return admitted;
    }
    return this.#admit(request);
  }

  /**
   * Admits a step synchronously when every limit has room now (in memory): its budget not spent,
   * its request and tokens within their pacers' credit (see `RatePacer.tryTakeNow`), a place under
   * its cap. `undefined`, with nothing taken, when one of them cannot answer so: the step then goes
   * the way that queues, waits and refuses.
   */
  #admitNow(request: AdmissionRequest): Admission | undefined {
    const budget = this.#limits.budget;
    if (budget !== undefined && !this.#underBudgetNow(budget, request.provider)) return undefined;
    const requests = this.#requests as RatePacer | undefined;
    const tokens = this.#tokens as RatePacer | undefined;
    if (requests !== undefined && !requests.tryTakeNow(1)) return undefined;
    let estimate = 0;
    if (tokens !== undefined) {
      estimate = estimateRequestTokens(request.systemPrompt, request.tools, request.history);
      if (!tokens.tryTakeNow(estimate)) {
        requests?.adjustNow(-1, requests.windowMark);
        return undefined;
      }
    }
    const steps = this.#steps;
    if (steps !== undefined && steps.tryAcquire() !== true) {
      requests?.adjustNow(-1, requests.windowMark);
      tokens?.adjustNow(-Math.min(estimate, tokens.max), tokens.windowMark);
      return undefined;
    }
    if (steps === undefined && tokens === undefined) return NOTHING_HELD;
    return new HeldAdmission(steps, tokens, estimate);
  }

  /** The tenant's spend of the budget's period is known now (the memory ledger) and below the budget, and the model has a price. */
  #underBudgetNow(budget: TenantBudget, provider: ChatProvider): boolean {
    const ledger = this.host.ledger;
    if (!(ledger instanceof MemoryUsageLedger)) return false;
    const now = Date.now();
    let period = this.#period;
    if (period === undefined || period.per !== budget.per || now >= period.end || now < period.start) {
      const { start, end } = periodOf(budget.per, now);
      period = this.#period = { per: budget.per, start, end };
    }
    if (this.host.pricing.priceOf(provider.name, provider.modelName) === undefined) return false;
    return ledger.spentUsd(this.tenant, period.start) < budget.usd;
  }

  async #admit(request: AdmissionRequest): Promise<Admission> {
    if (this.#closed !== undefined) throw this.#closed;
    this.#syncShared();
    const limits = this.#limits;
    const wait = limits.onLimit !== 'refuse';
    const maxWaitMs = limits.maxWaitMs ?? DEFAULT_LIMIT_MAX_WAIT_MS;
    const deadline = Date.now() + maxWaitMs;
    const { signal } = request;
    if (signal?.aborted) throw signal.reason;
    // A shared store that admits every limit at once: one round trip when all have room.
    const store = this.host.limitStore;
    if (store?.admitStep !== undefined && (this.#steps !== undefined || this.#requests !== undefined || this.#tokens !== undefined || limits.budget !== undefined || limits.maxConcurrentToolCalls !== undefined)) {
      const admitted = await this.#admitAtOnce(store, request);
      if (admitted !== undefined) return admitted;
      // The store knew newer shared limits: admitted under them, from the start.
      if (this.#syncShared()) return this.#admit(request);
    }
    // A gate kept after its cap was lifted still counts (so that a cap set again counts what runs).
    const steps = this.#steps;
    const taken = steps?.tryAcquire();
    if (steps && taken !== true && (taken === false || !(await taken))) {
      const refusal = (reason: 'refused' | 'timeout'): TenantLimitError => this.#capError('maxConcurrentSteps', steps, reason);
      if (!wait) throw refusal('refused');
      await steps.acquire(signal, maxWaitMs, () => refusal('timeout'));
    }
    // From here on a failure gives the place back.
    let requests: Pacer | undefined;
    let tokens: Pacer | undefined;
    let estimate = 0;
    try {
      const requestPacer = this.#requests;
      const tokenPacer = this.#tokens;
      // A pacing wait also ends when the tenant is removed (the close signal).
      const closing = this.#closing.signal;
      if (requestPacer) {
        const refused = await requestPacer.take(1, signal, closing, wait, Math.max(0, deadline - Date.now()));
        if (refused) throw this.#paceError('requestsPerMinute', requestPacer, refused, undefined);
        requests = requestPacer;
      }
      if (tokenPacer) {
        estimate = estimateRequestTokens(request.systemPrompt, request.tools, request.history);
        const refused = await tokenPacer.take(estimate, signal, closing, wait, Math.max(0, deadline - Date.now()));
        if (refused) throw this.#paceError('tokensPerMinute', tokenPacer, refused, estimate);
        tokens = tokenPacer;
      }
      await this.#checkBudget(request.provider);
      if (signal?.aborted) throw signal.reason;
    } catch (error) {
      if (steps) steps.release();
      if (requests) void requests.refund(1).catch(ignore);
      if (tokens) void tokens.refund(estimate).catch(ignore);
      throw error;
    }
    return tokens === undefined ? this.#admitted(steps, undefined, 0) : new HeldAdmission(steps, tokens, estimate, false);
  }

  /**
   * Asks `store` for every limit of the step at once; `undefined` when one has no room (or the
   * store cannot ask so), and for a model without a price (its refusal comes from the budget check).
   */
  async #admitAtOnce(store: LimitStore, request: AdmissionRequest): Promise<Admission | undefined> {
    const budget = this.#limits.budget;
    let since = 0;
    if (budget !== undefined) {
      if (this.host.pricing.priceOf(request.provider.name, request.provider.modelName) === undefined) return undefined;
      since = periodOf(budget.per, Date.now()).start;
    }
    const tokens = this.#tokens;
    const estimate = tokens === undefined ? 0 : estimateRequestTokens(request.systemPrompt, request.tools, request.history);
    const grant = await store.admitStep!({
      tenant: this.tenant,
      steps: this.#steps,
      toolCalls: this.#limits.maxConcurrentToolCalls === undefined ? undefined : this.#toolCalls,
      requests: this.#requests,
      tokens,
      tokenPoints: estimate,
      budget: budget === undefined ? undefined : { usd: budget.usd, since, ledger: this.host.ledger },
      limitsVersion: this.#sharedVersion,
    });
    if (grant === undefined) return undefined;
    const { signal } = request;
    if (signal?.aborted || this.#closed !== undefined) {
      grant.withdraw();
      throw signal?.aborted ? signal.reason : this.#closed;
    }
    return granted(grant, tokens, estimate);
  }

  /** An admitted step, holding a place of `steps` (if any) and `estimate` tokens of `tokens` (if any). */
  #admitted(steps: CapGate | undefined, tokens: Pacer | undefined, estimate: number): Admission {
    let ended = false;
    return {
      end: (usage) => {
        if (ended) return;
        ended = true;
        if (steps) steps.release();
        if (tokens && usage !== undefined) void tokens.adjust(totalTokens(usage) - Math.min(estimate, tokens.max)).catch(ignore);
      },
    };
  }

  async #checkBudget(provider: ChatProvider): Promise<void> {
    const budget = this.#limits.budget;
    if (budget === undefined) return;
    const now = Date.now();
    const period = periodOf(budget.per, now);
    const fields = { tenant: this.tenant, budgetUsd: budget.usd, per: budget.per, retryAfterMs: period.end - now };
    if (this.host.pricing.priceOf(provider.name, provider.modelName) === undefined) {
      throw new TenantBudgetExceededError({ ...fields, spentUsd: await this.host.ledger.spentUsd(this.tenant, period.start), reason: 'unpriced', model: `${provider.name}/${provider.modelName}` });
    }
    const spent = await this.host.ledger.spentUsd(this.tenant, period.start);
    if (spent >= budget.usd) throw new TenantBudgetExceededError({ ...fields, spentUsd: spent, reason: 'spent' });
  }

  #capError(limit: TenantLimitName, gate: CapGate, reason: 'refused' | 'timeout'): TenantLimitError {
    return new TenantLimitError({ tenant: this.tenant, limit, max: gate.cap ?? 0, current: gate.active, retryAfterMs: undefined, reason });
  }

  #paceError(limit: TenantLimitName, pacer: Pacer, refused: PaceRefusal, requested: number | undefined): TenantLimitError {
    return new TenantLimitError({
      tenant: this.tenant,
      limit,
      max: pacer.max,
      current: refused.current,
      retryAfterMs: refused.retryAfterMs,
      ...(requested === undefined ? {} : { requested }),
      reason: refused.reason,
    });
  }

  /**
   * `toolset` with each call held to `maxConcurrentToolCalls` (read at each call): a call over the
   * cap waits in the tenant's queue (its `context.signal` aborting takes it out), or with `onLimit:
   * 'refuse'` — or after `maxWaitMs` — throws a {@link TenantLimitError}, which the step turns into
   * the call's error result. The same wrapper for the same toolset.
   */
  toolset<C>(toolset: Toolset<C>): Toolset<C> {
    let governed = this.#toolsets.get(toolset as Toolset) as Toolset<C> | undefined;
    if (governed === undefined) {
      governed = this.#govern(toolset);
      this.#toolsets.set(toolset as Toolset, governed as Toolset);
    }
    return governed;
  }

  /**
   * Give back a place of the tool-call gate once a call's result settles, passing the result on:
   * one pair for every call (the gate, once made, stays), where `finally` would make closures and
   * promises per call.
   */
  readonly #releasedResult = (result: ToolResult): ToolResult => {
    this.#toolCalls!.release();
    return result;
  };
  readonly #releasedError = (error: unknown): never => {
    this.#toolCalls!.release();
    throw error;
  };

  /** Runs the call holding a place of `gate` (the tool-call gate), and gives it back when its result settles (or it throws). */
  #holding<C>(gate: CapGate, inner: Toolset<C>, call: ToolCall, context: ToolContext<C>): ToolResult | Promise<ToolResult> {
    let result: ToolResult | Promise<ToolResult>;
    try {
      result = inner.handle(call, context);
    } catch (error) {
      gate.release();
      throw error;
    }
    if (typeof (result as Promise<ToolResult>)?.then !== 'function') {
      gate.release();
      return result;
    }
    return (result as Promise<ToolResult>).then(this.#releasedResult, this.#releasedError);
  }

  #govern<C>(inner: Toolset<C>): Toolset<C> {
    /** Over the cap (or, with a shared store, refused by it): refused, or queued. */
    const overCap = (gate: CapGate, call: ToolCall, context: ToolContext<C>): Promise<ToolResult> => {
      const limits = this.#limits;
      const refusal = (reason: 'refused' | 'timeout'): TenantLimitError => this.#capError('maxConcurrentToolCalls', gate, reason);
      if (limits.onLimit === 'refuse') throw refusal('refused');
      return gate.acquire(context.signal, limits.maxWaitMs ?? DEFAULT_LIMIT_MAX_WAIT_MS, () => refusal('timeout')).then(() => this.#holding(gate, inner, call, context));
    };
    const handle = (call: ToolCall, context: ToolContext<C>): ToolResult | Promise<ToolResult> => {
      if (!this.#local) this.#syncShared();
      const gate = this.#toolCalls;
      // A shared store's gate without a cap (lifted) is not asked: no round trip for a call that nothing limits.
      if (gate === undefined || (!this.#local && gate.cap === undefined)) return inner.handle(call, context);
      const taken = gate.tryAcquire();
      if (taken === true) return this.#holding(gate, inner, call, context);
      if (taken === false) return overCap(gate, call, context);
      return taken.then((ok) => (ok ? this.#holding(gate, inner, call, context) : overCap(gate, call, context)));
    };
    const governed: Toolset<C> = {
      get tools() {
        return inner.tools;
      },
      handle,
      ...(inner.needsApproval && { needsApproval: (call: ToolCall, context: ToolContext<C>) => inner.needsApproval!(call, context) }),
      ...(inner.replayPolicy && { replayPolicy: (call: ToolCall) => inner.replayPolicy!(call) }),
    };
    return governed;
  }
}

/** A step admitted in memory that holds nothing to give back (no cap, no tokens pacer). */
const NOTHING_HELD: Admission = Object.freeze({ end: () => undefined });

/**
 * A step admitted in memory holding a place of `steps` (if any) and `estimate` tokens of `tokens`
 * (if any): its end gives the place back and corrects the tokens with the real usage — from the
 * pacer's credit at once when it can, else through the limiter.
 */
class HeldAdmission implements Admission {
  #ended = false;
  /** The tokens pacer's window mark at the take (see `RatePacer.windowMark`): a correction to fewer tokens is given back to that window only. */
  readonly #mark: number;

  constructor(
    private readonly steps: CapGate | undefined,
    private readonly tokens: Pacer | undefined,
    private readonly estimate: number,
    /** Whether the tokens were taken from the pacer's credit (then its mark is the window's). */
    taken = true,
  ) {
    this.#mark = taken && tokens instanceof RatePacer ? tokens.windowMark : Number.NaN;
  }

  end(usage: TokenUsage | undefined): void {
    if (this.#ended) return;
    this.#ended = true;
    if (this.steps) this.steps.release();
    const tokens = this.tokens;
    if (tokens === undefined || usage === undefined) return;
    const delta = totalTokens(usage) - Math.min(this.estimate, tokens.max);
    if (tokens instanceof RatePacer && tokens.adjustNow(delta, this.#mark)) return;
    void tokens.adjust(delta).catch(ignore);
  }
}

/** A step admitted by a store at once: its end corrects the tokens as {@link TenantGovernor} does in memory. */
function granted(grant: StepGrant, tokens: Pacer | undefined, estimate: number): Admission {
  let ended = false;
  return {
    end: (usage) => {
      if (ended) return;
      ended = true;
      grant.end(tokens !== undefined && usage !== undefined ? totalTokens(usage) - Math.min(estimate, tokens.max) : 0);
    },
  };
}

function ignore(): void {}
