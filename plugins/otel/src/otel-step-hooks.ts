import {
  APIStatusError,
  inputTokens,
  type CleanupEvent,
  type ContextScope,
  type ProviderSwitchEvent,
  type StepEndEvent,
  type StepHooks,
  type StepStartEvent,
  type ToolCall,
  type ToolCallEvent,
  type TokenUsage,
  type ToolResultEvent,
} from '@kosong/core';
import { inject, injectable, optional, preDestroy, UsagePricing } from '@kosong/core/kernel';
import type { TurnScope } from '@kosong/core/runtime';
import { SpanKind, SpanStatusCode, context, diag, metrics, trace, type Attributes, type Exception, type Span, type Tracer } from '@opentelemetry/api';
import {
  cappedText,
  inputMessagesJson,
  outputMessagesJson,
  systemInstructionsJson,
  toolArgumentsText,
  toolDefinitionsJson,
  toolOutputText,
} from './content.js';
import {
  ATTR_ERROR_TYPE,
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_INPUT_MESSAGES,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_OUTPUT_MESSAGES,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_OUTPUT_TYPE,
  ATTR_GEN_AI_REQUEST_MAX_TOKENS,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_REQUEST_SEED,
  ATTR_GEN_AI_REQUEST_STOP_SEQUENCES,
  ATTR_GEN_AI_REQUEST_TEMPERATURE,
  ATTR_GEN_AI_REQUEST_TOP_P,
  ATTR_GEN_AI_RESPONSE_FINISH_REASONS,
  ATTR_GEN_AI_RESPONSE_ID,
  ATTR_GEN_AI_TOOL_CALL_ARGUMENTS,
  ATTR_GEN_AI_SYSTEM_INSTRUCTIONS,
  ATTR_GEN_AI_TOOL_CALL_RESULT,
  ATTR_GEN_AI_TOOL_DEFINITIONS,
  ATTR_GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_KOSONG_STEP_CANCELLED,
  ATTR_KOSONG_STEP_ID,
  EVENT_KOSONG_PROVIDER_FALLBACK,
  ATTR_KOSONG_STEP_LEAKED_TOOL_CALLS,
  ATTR_KOSONG_TENANT_ID,
  ATTR_KOSONG_TURN_ID,
  ATTR_KOSONG_TURN_STEPS,
  ATTR_KOSONG_TURN_STOP_REASON,
  ERROR_TYPE_LEAKED,
  ERROR_TYPE_NO_RESULT,
  ERROR_TYPE_NOT_EXECUTED,
  ERROR_TYPE_TOOL_ERROR,
  GEN_AI_OPERATION_CHAT,
  GEN_AI_OPERATION_EXECUTE_TOOL,
  GEN_AI_OPERATION_INVOKE_AGENT,
  GEN_AI_OUTPUT_TYPE_JSON,
  GEN_AI_SCHEMA_URL,
  genAiFinishReason,
} from './conventions.js';
import { errorMessageOf, errorTypeOf } from './error-type.js';
import { BoundedCache } from './bounded-cache.js';
import { GenAiInstruments } from './instruments.js';
import { MetricAttributes } from './metric-attributes.js';
import { DEFAULT_CONTENT_MAX_LENGTH, OtelPluginOptions } from './options.js';
import { INSTRUMENTATION_SCOPE_NAME, INSTRUMENTATION_SCOPE_VERSION } from './scope.js';
import { providerSwitchAttributes } from './provider-switch.js';
import { StepTrace, endToolSpan } from './step-trace.js';

/**
 * The telemetry of kosong steps as {@link StepHooks}: a `chat {model}` span per step (CLIENT), an
 * `execute_tool {tool}` span per tool call (INTERNAL, child of its step's span), the GenAI client
 * metrics and kosong's tool counters. `otelPlugin` binds one to a kernel; pass one to `step({ hooks })`
 * to trace plain steps.
 *
 * Spans open at `onStepStart` and `onToolCall`. A tool span ends at its `onToolResult`; the step span
 * ends at `onCleanup` (the last event of every step, on every exit path), after any tool span left
 * open (leaked, or whose result never reached this object) was ended as an error. The state of a
 * running step lives in a map keyed by step id and is deleted at cleanup; nothing is shared between
 * steps, so concurrent steps (of any tenants) never mix spans. No `onPart` hook: streaming costs nothing.
 *
 * An `@injectable()` class: `otelPlugin` binds its options under {@link OtelPluginOptions} and lets
 * the kernel create it (once for the kernel, and once per tenant with bindings of its own); the
 * kernel calls {@link OtelStepHooks.endAll} when it disposes it. `new OtelStepHooks(options)` works
 * as well, outside a kernel.
 */
@injectable()
export class OtelStepHooks implements StepHooks {
  readonly #steps = new Map<string, StepTrace>();
  /** `invoke_agent` spans of turns still running. */
  readonly #turns = new Set<Span>();
  readonly #tracer: Tracer;
  readonly #instruments: GenAiInstruments;
  readonly #captureContent: boolean;
  readonly #contentMaxLength: number;
  readonly #metricAttributes: MetricAttributes;
  /** The kernel's prices (the usage ledger's), for `kosong.client.cost`; none outside a kernel. */
  readonly #pricing: UsagePricing | undefined;
  /** `chat {model}` by model, `execute_tool {tool}` by tool: the same few names for every step. */
  readonly #chatSpanNames = new BoundedCache<string, string>(SPAN_NAME_CACHE_SIZE);
  readonly #toolSpanNames = new BoundedCache<string, string>(SPAN_NAME_CACHE_SIZE);

  constructor(@inject(OtelPluginOptions) @optional() options: OtelPluginOptions = {}, @inject(UsagePricing) @optional() pricing?: UsagePricing) {
    this.#pricing = pricing;
    const tracerProvider = options.tracerProvider ?? trace.getTracerProvider();
    const meterProvider = options.meterProvider ?? metrics.getMeterProvider();
    const scope = { schemaUrl: GEN_AI_SCHEMA_URL };
    this.#tracer = tracerProvider.getTracer(INSTRUMENTATION_SCOPE_NAME, INSTRUMENTATION_SCOPE_VERSION, scope);
    this.#instruments = new GenAiInstruments(meterProvider.getMeter(INSTRUMENTATION_SCOPE_NAME, INSTRUMENTATION_SCOPE_VERSION, scope));
    this.#captureContent = options.captureContent === true;
    this.#contentMaxLength = options.contentMaxLength ?? DEFAULT_CONTENT_MAX_LENGTH;
    this.#metricAttributes = new MetricAttributes(options.tenantInMetrics === true);
  }

  /** How many steps have spans open (started, not yet cleaned up). */
  get openSteps(): number {
    return this.#steps.size;
  }

  /** Starts the step span, with the attributes samplers read set at start. */
  onStepStart(event: StepStartEvent): void {
    const existing = this.#steps.get(event.stepId);
    if (existing) {
      // Events carry nothing but the step id to tell steps apart: a reused id merges two steps' spans.
      existing.holders++;
      diag.warn(`@kosong/plugin-otel: step id "${event.stepId}" is already running; its spans are shared (give each running step its own id)`);
      return;
    }
    const attributes: Attributes = {
      [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_CHAT,
      [ATTR_GEN_AI_PROVIDER_NAME]: event.provider,
      [ATTR_GEN_AI_REQUEST_MODEL]: event.model,
      [ATTR_KOSONG_STEP_ID]: event.stepId,
    };
    if (event.tenant !== undefined) attributes[ATTR_KOSONG_TENANT_ID] = event.tenant;
    addRequestAttributes(attributes, event);
    const parent = context.active();
    const name = this.#chatSpanNames.get(event.model) ?? this.#chatSpanNames.set(event.model, spanName(GEN_AI_OPERATION_CHAT, event.model));
    const span = this.#tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes }, parent);
    this.#steps.set(event.stepId, new StepTrace(span, parent, event.tenant));
    if (this.#captureContent && span.isRecording()) {
      const max = this.#contentMaxLength;
      span.setAttribute(ATTR_GEN_AI_INPUT_MESSAGES, inputMessagesJson(event.history, max));
      if (event.systemPrompt) span.setAttribute(ATTR_GEN_AI_SYSTEM_INSTRUCTIONS, systemInstructionsJson(event.systemPrompt, max));
      if (event.tools && event.tools.length > 0) span.setAttribute(ATTR_GEN_AI_TOOL_DEFINITIONS, toolDefinitionsJson(event.tools, max));
    }
  }

  /**
   * Makes this plugin's span the active context while the runtime runs a piece of work: the step's
   * `chat` span around its provider call (so the HTTP request of an instrumented client nests under
   * it), a call's `execute_tool` span around the tool (so what the tool does nests under it), and a
   * new `invoke_agent` span around an agent turn (so its steps nest under it). Needs a context
   * manager (the SDK's Node setup registers one); without one the work just runs.
   */
  runInContext<T>(scope: ContextScope, run: () => T): T {
    switch (scope.kind) {
      case 'request': {
        const step = this.#steps.get(scope.stepId);
        return step ? context.with(step.context, run) : run();
      }
      case 'tool': {
        const step = this.#steps.get(scope.stepId);
        const tool = step?.tools.get(scope.index);
        return step && tool ? context.with(trace.setSpan(step.context, tool.span), run) : run();
      }
      case 'turn':
        return this.#turn(scope, run);
      default:
        return run();
    }
  }

  /** Counts the call and starts its tool span. */
  onToolCall(event: ToolCallEvent): void {
    this.#instruments.countToolCall(this.#metricAttributes.tool(event.toolCall.function.name, event.tenant));
    const step = this.#steps.get(event.stepId);
    if (!step) return;
    const { span } = step.startTool(this.#tracer, this.#toolSpanName(event.toolCall), event.index, event.toolCall, event.executed);
    if (this.#captureContent && span.isRecording()) {
      const args = toolArgumentsText(event.toolCall, this.#contentMaxLength);
      if (args !== undefined) span.setAttribute(ATTR_GEN_AI_TOOL_CALL_ARGUMENTS, args);
    }
  }

  /** Ends the tool span; an error result marks it (and counts) as an error. */
  onToolResult(event: ToolResultEvent): void {
    const step = this.#steps.get(event.stepId);
    // A result whose call this object missed (its onToolCall failed or was detached) still gets a span.
    const tool = step?.tools.get(event.index) ?? step?.startTool(this.#tracer, this.#toolSpanName(event.toolCall), event.index, event.toolCall, true, Date.now() - event.durationMs);
    step?.tools.delete(event.index);
    const value = event.result.returnValue;
    const errorType = !value.isError ? undefined : tool?.executed === false ? ERROR_TYPE_NOT_EXECUTED : ERROR_TYPE_TOOL_ERROR;
    if (errorType !== undefined) this.#instruments.countToolError(this.#metricAttributes.toolError(event.toolCall.function.name, event.tenant, errorType));
    if (!tool) return;
    let message: string | undefined;
    if (this.#captureContent && tool.span.isRecording()) {
      if (errorType === undefined) tool.span.setAttribute(ATTR_GEN_AI_TOOL_CALL_RESULT, toolOutputText(value, this.#contentMaxLength));
      else message = cappedText(value.message, this.#contentMaxLength);
    }
    endToolSpan(tool.span, errorType, message);
  }

  /** Records the response, usage and outcome on the step span, and the step's metrics. */
  onStepEnd(event: StepEndEvent): void {
    // A failed step has no message; `error` is whatever was thrown (even `undefined`).
    const failed = event.error !== undefined || event.message === undefined;
    const errorType = failed ? errorTypeOf(event.error) : undefined;
    const metricAttributes = this.#metricAttributes.step(event.provider, event.model, event.tenant);
    this.#instruments.recordOperation(
      event.durationMs,
      errorType === undefined ? metricAttributes.operation : this.#metricAttributes.failedStep(event.provider, event.model, event.tenant, errorType),
    );
    const usage = event.usage;
    if (usage) {
      this.#instruments.recordTokens(inputTokens(usage), usage.output, metricAttributes);
      const price = this.#pricing?.priceOf(event.provider, event.model);
      if (price) {
        const { input, output, cacheRead = input, cacheWrite = input } = price;
        const inputUsd = (usage.inputOther * input + usage.inputCacheRead * cacheRead + usage.inputCacheCreation * cacheWrite) / 1e6;
        this.#instruments.recordCost(inputUsd, (usage.output * output) / 1e6, metricAttributes);
      }
    }

    const step = this.#steps.get(event.stepId);
    if (!step) return;
    step.endSeen = true;
    const span = step.span;
    if (event.messageId !== undefined) span.setAttribute(ATTR_GEN_AI_RESPONSE_ID, event.messageId);
    if (event.finishReason !== undefined) span.setAttribute(ATTR_GEN_AI_RESPONSE_FINISH_REASONS, [genAiFinishReason(event.finishReason)]);
    if (usage) {
      span.setAttributes({
        [ATTR_GEN_AI_USAGE_INPUT_TOKENS]: inputTokens(usage),
        [ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]: usage.output,
        [ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS]: usage.inputCacheRead,
        [ATTR_GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS]: usage.inputCacheCreation,
      });
    }
    if (errorType !== undefined) {
      recordError(span, event.error);
    } else if (this.#captureContent && event.message && span.isRecording()) {
      span.setAttribute(ATTR_GEN_AI_OUTPUT_MESSAGES, outputMessagesJson(event.message, event.finishReason, this.#contentMaxLength));
    }
  }

  /** A `kosong.provider.fallback` event on the step's span: its provider moved the request to another model. */
  onProviderSwitch(event: ProviderSwitchEvent): void {
    const span = this.#steps.get(event.stepId)?.span;
    if (span?.isRecording()) span.addEvent(EVENT_KOSONG_PROVIDER_FALLBACK, providerSwitchAttributes(event));
  }

  /** Ends every tool span still open (as errors), then the step span, and forgets the step. */
  onCleanup(event: CleanupEvent): void {
    const step = this.#steps.get(event.stepId);
    if (!step || --step.holders > 0) return;
    this.#steps.delete(event.stepId);
    this.#end(step, event.leaked, event.cancelled);
  }

  /**
   * Ends every span still open, as if each step had been cleaned up now (tool spans as `no_result`),
   * and forgets all steps. For shutdown: the kernel calls it (`@preDestroy`) when it disposes the
   * hooks — the kernel, or the tenant they were created for.
   */
  @preDestroy()
  endAll(): void {
    const steps = [...this.#steps.values()];
    this.#steps.clear();
    for (const step of steps) this.#end(step, [], false);
    const turns = [...this.#turns];
    this.#turns.clear();
    for (const span of turns) endSpan(span);
  }

  /** Runs a turn inside its `invoke_agent` span (INTERNAL: the agent runs in this process), ended when the turn settles. */
  #turn<T>(scope: TurnScope, run: () => T): T {
    const attributes: Attributes = { [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_INVOKE_AGENT, [ATTR_KOSONG_TURN_ID]: scope.turnId };
    if (scope.provider !== undefined) attributes[ATTR_GEN_AI_PROVIDER_NAME] = scope.provider;
    if (scope.model !== undefined) attributes[ATTR_GEN_AI_REQUEST_MODEL] = scope.model;
    if (scope.agent !== undefined) attributes[ATTR_GEN_AI_AGENT_NAME] = scope.agent;
    if (scope.tenant !== undefined) attributes[ATTR_KOSONG_TENANT_ID] = scope.tenant;
    const name = scope.agent === undefined ? GEN_AI_OPERATION_INVOKE_AGENT : `${GEN_AI_OPERATION_INVOKE_AGENT} ${scope.agent}`;
    const span = this.#tracer.startSpan(name, { kind: SpanKind.INTERNAL, attributes }, context.active());
    this.#turns.add(span);
    const end = (outcome: { readonly result: unknown } | { readonly error: unknown }): void => {
      if (!this.#turns.delete(span)) return; // ended by endAll
      if ('error' in outcome) recordError(span, outcome.error);
      else recordTurnResult(span, outcome.result);
      endSpan(span);
    };
    let result: T;
    try {
      result = context.with(trace.setSpan(context.active(), span), run);
    } catch (error) {
      end({ error });
      throw error;
    }
    if (isPromiseLike(result)) {
      result.then(
        (value) => end({ result: value }),
        (error: unknown) => end({ error }),
      );
    } else {
      end({ result });
    }
    return result;
  }

  #end(step: StepTrace, leaked: readonly ToolCall[], cancelled: boolean): void {
    try {
      for (const [index, tool] of step.tools) {
        const errorType = leaked.includes(tool.call) ? ERROR_TYPE_LEAKED : ERROR_TYPE_NO_RESULT;
        step.tools.delete(index);
        endToolSpan(tool.span, errorType);
        this.#instruments.countToolError(this.#metricAttributes.toolError(tool.call.function.name, step.tenant, errorType));
      }
      if (cancelled) step.span.setAttribute(ATTR_KOSONG_STEP_CANCELLED, true);
      if (leaked.length > 0) step.span.setAttribute(ATTR_KOSONG_STEP_LEAKED_TOOL_CALLS, leaked.length);
    } finally {
      step.span.end();
    }
  }

  /** `execute_tool {tool}`. */
  #toolSpanName(call: ToolCall): string {
    const tool = call.function.name;
    return this.#toolSpanNames.get(tool) ?? this.#toolSpanNames.set(tool, spanName(GEN_AI_OPERATION_EXECUTE_TOOL, tool));
  }
}

/** How many span names of each kind are kept (models, tools); past it the cache starts over. */
const SPAN_NAME_CACHE_SIZE = 1_024;

/** `{operation} {model}`, or the operation alone when the model has no name. */
function spanName(operation: string, model: string): string {
  return model === '' ? operation : `${operation} ${model}`;
}

/**
 * The request attributes of a step span from the generation options it asks for (the conventions'
 * `gen_ai.request.*`), each set only when it holds a value of the right type (the options are not
 * checked yet when the step starts), and `gen_ai.output.type` `json` when it asks for structured output.
 */
function addRequestAttributes(attributes: Attributes, event: StepStartEvent): void {
  const { maxOutputTokens, temperature, topP, stopSequences, seed } = event.generation;
  if (typeof maxOutputTokens === 'number') attributes[ATTR_GEN_AI_REQUEST_MAX_TOKENS] = maxOutputTokens;
  if (typeof temperature === 'number') attributes[ATTR_GEN_AI_REQUEST_TEMPERATURE] = temperature;
  if (typeof topP === 'number') attributes[ATTR_GEN_AI_REQUEST_TOP_P] = topP;
  if (Array.isArray(stopSequences) && stopSequences.every((s) => typeof s === 'string')) attributes[ATTR_GEN_AI_REQUEST_STOP_SEQUENCES] = [...stopSequences];
  if (typeof seed === 'number') attributes[ATTR_GEN_AI_REQUEST_SEED] = seed;
  if (event.output !== undefined) attributes[ATTR_GEN_AI_OUTPUT_TYPE] = GEN_AI_OUTPUT_TYPE_JSON;
}

/** Marks a span as failed with `error`: `error.type`, an HTTP status when known, an exception event, status ERROR. */
function recordError(span: Span, error: unknown): void {
  span.setAttribute(ATTR_ERROR_TYPE, errorTypeOf(error));
  if (APIStatusError.isInstance(error)) span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, error.statusCode);
  span.recordException(asException(error));
  span.setStatus({ code: SpanStatusCode.ERROR, message: errorMessageOf(error) });
}

/** What an agent turn's result says, on its span: steps, stop reason and the turn's token usage. */
function recordTurnResult(span: Span, result: unknown): void {
  if (typeof result !== 'object' || result === null) return;
  const { steps, stopReason, usage } = result as { steps?: unknown; stopReason?: unknown; usage?: unknown };
  if (typeof steps === 'number') span.setAttribute(ATTR_KOSONG_TURN_STEPS, steps);
  if (typeof stopReason === 'string') span.setAttribute(ATTR_KOSONG_TURN_STOP_REASON, stopReason);
  if (isTokenUsage(usage)) {
    span.setAttributes({ [ATTR_GEN_AI_USAGE_INPUT_TOKENS]: inputTokens(usage), [ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]: usage.output });
  }
}

function isTokenUsage(value: unknown): value is TokenUsage {
  if (typeof value !== 'object' || value === null) return false;
  const usage = value as Record<string, unknown>;
  return ['inputOther', 'output', 'inputCacheRead', 'inputCacheCreation'].every((key) => typeof usage[key] === 'number');
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === 'object' || typeof value === 'function') && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

/** Ends a span; a failing span processor must not escape into the work. */
function endSpan(span: Span): void {
  try {
    span.end();
  } catch {
    // ended as far as the API is concerned
  }
}

/** What `recordException` accepts: the error itself when it has a name or message, else its text. */
function asException(error: unknown): Exception {
  if (typeof error === 'object' && error !== null && ('message' in error || 'name' in error)) return error as Exception;
  return errorMessageOf(error);
}
