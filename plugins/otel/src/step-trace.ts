import type { ToolCall } from '@kosong/core';
import { SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span, type TimeInput, type Tracer } from '@opentelemetry/api';
import {
  ATTR_ERROR_TYPE,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GEN_AI_TOOL_TYPE,
  ATTR_KOSONG_TENANT_ID,
  ATTR_KOSONG_TOOL_CALL_EXECUTED,
  ATTR_KOSONG_TOOL_CALL_INDEX,
  ERROR_TYPE_NO_RESULT,
  GEN_AI_OPERATION_EXECUTE_TOOL,
  GEN_AI_TOOL_TYPE_FUNCTION,
} from './conventions.js';

/** An `execute_tool` span that has not ended yet. */
export interface OpenToolSpan {
  readonly span: Span;
  readonly call: ToolCall;
  /** `false` when the runtime answered the call with a "not executed" error instead of running it. */
  readonly executed: boolean;
}

/**
 * The spans of one step: its `chat` span and its `execute_tool` spans still open, keyed by the
 * call's position in the step (tool call ids may repeat within a step; positions never do).
 */
export class StepTrace {
  /** Open tool spans by call position. */
  readonly tools = new Map<number, OpenToolSpan>();
  /** Whether the step's end event reached this plugin. */
  endSeen = false;
  /** Running steps that share this step id; more than one only if the application reused an id. */
  holders = 1;
  /** The step span's context: the parent of its tool spans, active while its provider call runs. */
  readonly context: Context;

  constructor(
    readonly span: Span,
    parent: Context,
    readonly tenant: string | undefined,
  ) {
    this.context = trace.setSpan(parent, span);
  }

  /**
   * Starts the tool span of the call at `index` (named `spanName`: `execute_tool {tool}`), a child of the step span. A span still open at that
   * index (possible only when a step id was reused) is ended first, as `no_result`, so no span is
   * ever left open.
   */
  startTool(tracer: Tracer, spanName: string, index: number, call: ToolCall, executed: boolean, startTime?: TimeInput): OpenToolSpan {
    const previous = this.tools.get(index);
    if (previous) endToolSpan(previous.span, ERROR_TYPE_NO_RESULT);
    const name = call.function.name;
    const attributes: Attributes = {
      [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_EXECUTE_TOOL,
      [ATTR_GEN_AI_TOOL_NAME]: name,
      [ATTR_GEN_AI_TOOL_CALL_ID]: call.id,
      [ATTR_GEN_AI_TOOL_TYPE]: GEN_AI_TOOL_TYPE_FUNCTION,
      [ATTR_KOSONG_TOOL_CALL_INDEX]: index,
    };
    if (!executed) attributes[ATTR_KOSONG_TOOL_CALL_EXECUTED] = false;
    if (this.tenant !== undefined) attributes[ATTR_KOSONG_TENANT_ID] = this.tenant;
    const options = startTime === undefined ? { kind: SpanKind.INTERNAL, attributes } : { kind: SpanKind.INTERNAL, attributes, startTime };
    const tool: OpenToolSpan = { span: tracer.startSpan(spanName, options, this.context), call, executed };
    this.tools.set(index, tool);
    return tool;
  }
}

/**
 * Ends a tool span; with an `errorType`, as an error (status ERROR, `error.type`, and `message` as
 * the status description if given). Never throws: a failing span processor must not keep the other
 * spans of the step open.
 */
export function endToolSpan(span: Span, errorType: string | undefined, message?: string): void {
  try {
    if (errorType !== undefined) {
      span.setAttribute(ATTR_ERROR_TYPE, errorType);
      span.setStatus(message === undefined ? { code: SpanStatusCode.ERROR } : { code: SpanStatusCode.ERROR, message });
    }
  } finally {
    try {
      span.end();
    } catch {
      // the span processor failed; the span is ended as far as the API is concerned
    }
  }
}
