import type { Attributes, Counter, Histogram, Meter } from '@opentelemetry/api';
import type { StepMetricAttributes } from './metric-attributes.js';
import {
  METRIC_GEN_AI_CLIENT_OPERATION_DURATION,
  METRIC_GEN_AI_CLIENT_TOKEN_USAGE,
  METRIC_KOSONG_CLIENT_COST,
  METRIC_KOSONG_TOOL_CALLS,
  METRIC_KOSONG_TOOL_ERRORS,
  OPERATION_DURATION_BUCKETS,
  TOKEN_USAGE_BUCKETS,
} from './conventions.js';

/** The plugin's metric instruments, created once per plugin setup from one meter. */
export class GenAiInstruments {
  private readonly operationDuration: Histogram;
  private readonly tokenUsage: Histogram;
  private readonly cost: Counter;
  private readonly toolCalls: Counter;
  private readonly toolErrors: Counter;

  constructor(meter: Meter) {
    this.operationDuration = meter.createHistogram(METRIC_GEN_AI_CLIENT_OPERATION_DURATION, {
      description: 'GenAI operation duration.',
      unit: 's',
      advice: { explicitBucketBoundaries: [...OPERATION_DURATION_BUCKETS] },
    });
    this.tokenUsage = meter.createHistogram(METRIC_GEN_AI_CLIENT_TOKEN_USAGE, {
      description: 'Number of input and output tokens used.',
      unit: '{token}',
      advice: { explicitBucketBoundaries: [...TOKEN_USAGE_BUCKETS] },
    });
    this.cost = meter.createCounter(METRIC_KOSONG_CLIENT_COST, {
      description: 'Cost of the input and output tokens used, in US dollars (models with a price only).',
      unit: 'USD',
    });
    this.toolCalls = meter.createCounter(METRIC_KOSONG_TOOL_CALLS, {
      description: 'Tool calls the model made, executed or not.',
      unit: '{call}',
    });
    this.toolErrors = meter.createCounter(METRIC_KOSONG_TOOL_ERRORS, {
      description: 'Tool calls that ended in an error (an error result, not executed, leaked, or no result).',
      unit: '{call}',
    });
  }

  /** One model call: how long it took, in ms (recorded in seconds). */
  recordOperation(durationMs: number, attributes: Attributes): void {
    this.operationDuration.record(durationMs / 1000, attributes);
  }

  /** The tokens of one model call, as two points: input (cache included) and output. */
  recordTokens(input: number, output: number, attributes: StepMetricAttributes): void {
    this.tokenUsage.record(input, attributes.inputTokens);
    this.tokenUsage.record(output, attributes.outputTokens);
  }

  /** What the tokens of one model call cost, in US dollars, as two points like the tokens': input and output. */
  recordCost(inputUsd: number, outputUsd: number, attributes: StepMetricAttributes): void {
    this.cost.add(inputUsd, attributes.inputTokens);
    this.cost.add(outputUsd, attributes.outputTokens);
  }

  /** One tool call made by the model. */
  countToolCall(attributes: Attributes): void {
    this.toolCalls.add(1, attributes);
  }

  /** One tool call that ended in an error (`attributes` carry its `error.type`). */
  countToolError(attributes: Attributes): void {
    this.toolErrors.add(1, attributes);
  }
}
