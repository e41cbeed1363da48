import type { Attributes } from '@opentelemetry/api';
import { BoundedCache } from './bounded-cache.js';
import {
  ATTR_ERROR_TYPE,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_TOKEN_TYPE,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_KOSONG_TENANT_ID,
  GEN_AI_OPERATION_CHAT,
  GEN_AI_OPERATION_EXECUTE_TOOL,
  GEN_AI_TOKEN_TYPE_INPUT,
  GEN_AI_TOKEN_TYPE_OUTPUT,
} from './conventions.js';

/** The attributes of a step's metric points: the operation's, and those of its two token points. */
export interface StepMetricAttributes {
  readonly operation: Attributes;
  readonly inputTokens: Attributes;
  readonly outputTokens: Attributes;
}

/** How many distinct attribute sets each cache keeps before it starts over. */
const CAPACITY = 1_024;

/**
 * The attributes of the plugin's metric points, built once per provider, model, tool name (and
 * tenant, with `tenantInMetrics`) and then shared, frozen, by every point with the same ones: a step
 * makes up to five points, and building their attribute objects anew each time was most of what the
 * plugin cost a step when metrics go to the API's no-op meter.
 */
export class MetricAttributes {
  readonly #steps = new BoundedCache<string, StepMetricAttributes>(CAPACITY);
  readonly #tools = new BoundedCache<string, Attributes>(CAPACITY);
  readonly #errors = new BoundedCache<string, Attributes>(CAPACITY);
  /** The last step's key parts and attributes: consecutive steps nearly always share them. */
  #last: { readonly provider: string; readonly model: string; readonly tenant: string | undefined; readonly attributes: StepMetricAttributes } | undefined;

  constructor(private readonly tenantInMetrics: boolean) {}

  /** The attributes of a step's operation-duration and token-usage points. */
  step(provider: string, model: string, tenant: string | undefined): StepMetricAttributes {
    const metricTenant = this.tenantInMetrics ? tenant : undefined;
    const last = this.#last;
    if (last !== undefined && last.provider === provider && last.model === model && last.tenant === metricTenant) return last.attributes;
    const key = keyOf(metricTenant, provider, model);
    const attributes = this.#steps.get(key) ?? this.#steps.set(key, stepAttributes(provider, model, metricTenant));
    this.#last = { provider, model, tenant: metricTenant, attributes };
    return attributes;
  }

  /** The attributes of a step's operation-duration point when it failed with `errorType`. */
  failedStep(provider: string, model: string, tenant: string | undefined, errorType: string): Attributes {
    return { ...this.step(provider, model, tenant).operation, [ATTR_ERROR_TYPE]: errorType };
  }

  /** The attributes of a tool call's points. */
  tool(name: string, tenant: string | undefined): Attributes {
    const metricTenant = this.tenantInMetrics ? tenant : undefined;
    const key = metricTenant === undefined ? name : keyOf(metricTenant, name);
    return this.#tools.get(key) ?? this.#tools.set(key, toolAttributes(name, metricTenant));
  }

  /** The attributes of a tool-error point: the tool's, and the `error.type`. */
  toolError(name: string, tenant: string | undefined, errorType: string): Attributes {
    const metricTenant = this.tenantInMetrics ? tenant : undefined;
    const key = keyOf(metricTenant, name, errorType);
    return this.#errors.get(key) ?? this.#errors.set(key, Object.freeze({ ...this.tool(name, tenant), [ATTR_ERROR_TYPE]: errorType }));
  }
}

/** One cache key of several names (none contains a NUL in practice; if one did, two sets could share a key only if every part matched around it). */
function keyOf(tenant: string | undefined, ...names: string[]): string {
  return `${tenant === undefined ? '\u0001' : `\u0002${tenant}`}\u0000${names.join('\u0000')}`;
}

function stepAttributes(provider: string, model: string, tenant: string | undefined): StepMetricAttributes {
  const operation: Attributes = {
    [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_CHAT,
    [ATTR_GEN_AI_PROVIDER_NAME]: provider,
    [ATTR_GEN_AI_REQUEST_MODEL]: model,
  };
  if (tenant !== undefined) operation[ATTR_KOSONG_TENANT_ID] = tenant;
  return Object.freeze({
    operation: Object.freeze(operation),
    inputTokens: Object.freeze({ ...operation, [ATTR_GEN_AI_TOKEN_TYPE]: GEN_AI_TOKEN_TYPE_INPUT }),
    outputTokens: Object.freeze({ ...operation, [ATTR_GEN_AI_TOKEN_TYPE]: GEN_AI_TOKEN_TYPE_OUTPUT }),
  });
}

function toolAttributes(name: string, tenant: string | undefined): Attributes {
  const attributes: Attributes = { [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_EXECUTE_TOOL, [ATTR_GEN_AI_TOOL_NAME]: name };
  if (tenant !== undefined) attributes[ATTR_KOSONG_TENANT_ID] = tenant;
  return Object.freeze(attributes);
}
