/**
 * Every OpenTelemetry name this plugin emits, and the version of the GenAI semantic conventions they
 * follow, in one place. The GenAI conventions are still in Development status and their names move
 * between versions: change them here, together with {@link GEN_AI_CONVENTIONS_VERSION}, and nowhere else.
 *
 * Names under `kosong.*` are this plugin's own (the conventions define no equivalent).
 *
 * @module
 */

/**
 * The OpenTelemetry semantic conventions release whose GenAI conventions this plugin follows: the last
 * release (v1.41.0) that carried them before they moved to `open-telemetry/semantic-conventions-genai`
 * (v1.42.0 deprecated them in the main repository; the new repository has no versioned release yet).
 */
export const GEN_AI_CONVENTIONS_VERSION = '1.41.0';

/** The schema URL of {@link GEN_AI_CONVENTIONS_VERSION}, given to the tracer and the meter. */
export const GEN_AI_SCHEMA_URL = `https://opentelemetry.io/schemas/${GEN_AI_CONVENTIONS_VERSION}`;

// ── GenAI attributes ────────────────────────────────────────────────────────────────────────────

/** The operation: {@link GEN_AI_OPERATION_CHAT}, {@link GEN_AI_OPERATION_EXECUTE_TOOL} or {@link GEN_AI_OPERATION_INVOKE_AGENT}. Required. */
export const ATTR_GEN_AI_OPERATION_NAME = 'gen_ai.operation.name';
/** The provider's name as the `ChatProvider` reports it (`openai`, `kimi`, `mock`…). Required. */
export const ATTR_GEN_AI_PROVIDER_NAME = 'gen_ai.provider.name';
/** The model the request was made to. */
export const ATTR_GEN_AI_REQUEST_MODEL = 'gen_ai.request.model';
/** The agent's name (`AgentOptions.name`), on an `invoke_agent` span. */
export const ATTR_GEN_AI_AGENT_NAME = 'gen_ai.agent.name';
/** The request's cap on output tokens (the neutral generation option `maxOutputTokens`). */
export const ATTR_GEN_AI_REQUEST_MAX_TOKENS = 'gen_ai.request.max_tokens';
/** The request's sampling temperature. */
export const ATTR_GEN_AI_REQUEST_TEMPERATURE = 'gen_ai.request.temperature';
/** The request's nucleus sampling. */
export const ATTR_GEN_AI_REQUEST_TOP_P = 'gen_ai.request.top_p';
/** The request's stop sequences. */
export const ATTR_GEN_AI_REQUEST_STOP_SEQUENCES = 'gen_ai.request.stop_sequences';
/** The request's seed. */
export const ATTR_GEN_AI_REQUEST_SEED = 'gen_ai.request.seed';
/** The content type the request asked for: {@link GEN_AI_OUTPUT_TYPE_JSON} when it asked for structured output. */
export const ATTR_GEN_AI_OUTPUT_TYPE = 'gen_ai.output.type';
/** The provider's id of the response message. */
export const ATTR_GEN_AI_RESPONSE_ID = 'gen_ai.response.id';
/** Why the model stopped, as a one-element array (see {@link genAiFinishReason}). */
export const ATTR_GEN_AI_RESPONSE_FINISH_REASONS = 'gen_ai.response.finish_reasons';
/** All input tokens, cache reads and cache writes included (as the conventions require). */
export const ATTR_GEN_AI_USAGE_INPUT_TOKENS = 'gen_ai.usage.input_tokens';
/** Output tokens, reasoning included. */
export const ATTR_GEN_AI_USAGE_OUTPUT_TOKENS = 'gen_ai.usage.output_tokens';
/** Input tokens served from the provider's prompt cache (included in the input tokens). */
export const ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS = 'gen_ai.usage.cache_read.input_tokens';
/** Input tokens written to the provider's prompt cache (included in the input tokens). */
export const ATTR_GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS = 'gen_ai.usage.cache_creation.input_tokens';
/** The tool's name. */
export const ATTR_GEN_AI_TOOL_NAME = 'gen_ai.tool.name';
/** The model's id of the tool call. */
export const ATTR_GEN_AI_TOOL_CALL_ID = 'gen_ai.tool.call.id';
/** The tool's type: always {@link GEN_AI_TOOL_TYPE_FUNCTION} (kosong tools run in the client). */
export const ATTR_GEN_AI_TOOL_TYPE = 'gen_ai.tool.type';
/** Which tokens a `gen_ai.client.token.usage` point counts: `input` or `output`. */
export const ATTR_GEN_AI_TOKEN_TYPE = 'gen_ai.token.type';

// Content (opt-in: recorded only with `captureContent: true`), as JSON strings (span attributes
// cannot hold structured values in @opentelemetry/api 1.x).

/** The history sent to the model, in the conventions' input-messages JSON schema. Opt-in. */
export const ATTR_GEN_AI_INPUT_MESSAGES = 'gen_ai.input.messages';
/** The model's message, in the conventions' output-messages JSON schema. Opt-in. */
export const ATTR_GEN_AI_OUTPUT_MESSAGES = 'gen_ai.output.messages';
/** The system prompt, as the conventions' system-instructions JSON (`[{type: 'text', content}]`). Opt-in. */
export const ATTR_GEN_AI_SYSTEM_INSTRUCTIONS = 'gen_ai.system_instructions';
/** The tools offered to the model, as the conventions' tool-definitions JSON. Opt-in. */
export const ATTR_GEN_AI_TOOL_DEFINITIONS = 'gen_ai.tool.definitions';
/** The arguments of a tool call (the model's JSON text). Opt-in. */
export const ATTR_GEN_AI_TOOL_CALL_ARGUMENTS = 'gen_ai.tool.call.arguments';
/** The output of a tool call that succeeded. Opt-in. */
export const ATTR_GEN_AI_TOOL_CALL_RESULT = 'gen_ai.tool.call.result';

// ── General attributes ──────────────────────────────────────────────────────────────────────────

/** The class of error an operation ended with (see `errorTypeOf` and the tool error types below). */
export const ATTR_ERROR_TYPE = 'error.type';
/** The HTTP status of an `APIStatusError`. */
export const ATTR_HTTP_RESPONSE_STATUS_CODE = 'http.response.status_code';

// ── kosong attributes ───────────────────────────────────────────────────────────────────────────

/** The tenant the step ran for (absent for steps without a tenant). On step and tool spans. */
export const ATTR_KOSONG_TENANT_ID = 'kosong.tenant.id';
/** The step's id, as in every hook event and hook-error report (correlates spans with logs). */
export const ATTR_KOSONG_STEP_ID = 'kosong.step.id';
/** The agent turn's id, on its `invoke_agent` span. */
export const ATTR_KOSONG_TURN_ID = 'kosong.turn.id';
/** On an `invoke_agent` span: how many steps the turn took. */
export const ATTR_KOSONG_TURN_STEPS = 'kosong.turn.steps';
/** On an `invoke_agent` span: why the turn ended (`no_tool_calls`, `max_steps`, `approval_required`). */
export const ATTR_KOSONG_TURN_STOP_REASON = 'kosong.turn.stop_reason';
/** Set to `true` on a step span when running tools had to be aborted (failure, abort or cancel). */
export const ATTR_KOSONG_STEP_CANCELLED = 'kosong.step.cancelled';
/** On a step span: how many tool calls were still running past the cleanup deadline. */
export const ATTR_KOSONG_STEP_LEAKED_TOOL_CALLS = 'kosong.step.leaked_tool_calls';
/** The position of the call in the step's tool calls (tool call ids may repeat; positions do not). */
export const ATTR_KOSONG_TOOL_CALL_INDEX = 'kosong.tool.call.index';
/** `false` when the runtime did not run the call (it answered with a "not executed" error). */
export const ATTR_KOSONG_TOOL_CALL_EXECUTED = 'kosong.tool.call.executed';

// ── Model fallback (`@kosong/provider-fallback`, through the `onProviderSwitch` hook) ─────────────

/**
 * The span event of a model fallback passing over a model (the step hook `onProviderSwitch`): added
 * to the step's `chat` span. A `kosong.*` name: the GenAI conventions define no
 * fallback event, and `gen_ai.*` names are theirs.
 */
export const EVENT_KOSONG_PROVIDER_FALLBACK = 'kosong.provider.fallback';
/** On a fallback event: the provider name of the model passed over. */
export const ATTR_KOSONG_FALLBACK_FROM_PROVIDER = 'kosong.fallback.from.provider';
/** On a fallback event: the model passed over. */
export const ATTR_KOSONG_FALLBACK_FROM_MODEL = 'kosong.fallback.from.model';
/** On a fallback event: the provider name of the model asked next. */
export const ATTR_KOSONG_FALLBACK_TO_PROVIDER = 'kosong.fallback.to.provider';
/** On a fallback event: the model asked next. */
export const ATTR_KOSONG_FALLBACK_TO_MODEL = 'kosong.fallback.to.model';
/** On a fallback event: why the model was passed over: `error` (its request failed), `circuit-open` (its breaker skipped it) or `retry-after` (it rests for a retry-after). */
export const ATTR_KOSONG_FALLBACK_REASON = 'kosong.fallback.reason';

// ── Values ──────────────────────────────────────────────────────────────────────────────────────

/** `gen_ai.operation.name` of a step span. */
export const GEN_AI_OPERATION_CHAT = 'chat';
/** `gen_ai.operation.name` of a tool span. */
export const GEN_AI_OPERATION_EXECUTE_TOOL = 'execute_tool';
/** `gen_ai.operation.name` of an agent turn's span. */
export const GEN_AI_OPERATION_INVOKE_AGENT = 'invoke_agent';
/** `gen_ai.output.type` of a request that asked for structured (JSON) output. */
export const GEN_AI_OUTPUT_TYPE_JSON = 'json';
/** `gen_ai.tool.type` of every tool span. */
export const GEN_AI_TOOL_TYPE_FUNCTION = 'function';
/** `gen_ai.token.type` of input tokens. */
export const GEN_AI_TOKEN_TYPE_INPUT = 'input';
/** `gen_ai.token.type` of output tokens. */
export const GEN_AI_TOKEN_TYPE_OUTPUT = 'output';

/** `error.type` when nothing better is known (a thrown non-error, an error without a name). */
export const ERROR_TYPE_OTHER = '_OTHER';
/** `error.type` of a tool span whose tool returned an error result. */
export const ERROR_TYPE_TOOL_ERROR = 'tool_error';
/** `error.type` of a tool span for a call the runtime did not run (cut off, deferred, or cancelled). */
export const ERROR_TYPE_NOT_EXECUTED = 'not_executed';
/** `error.type` of a tool span whose tool ignored its abort signal past the cleanup deadline. */
export const ERROR_TYPE_LEAKED = 'leaked';
/** `error.type` of a tool span that was still open when the step was cleaned up without a result for it. */
export const ERROR_TYPE_NO_RESULT = 'no_result';

/**
 * A kosong finish reason as the conventions' output-messages schema names it: `tool_calls` becomes
 * `tool_call`; `stop`, `length`, `content_filter` and `other` are kept. Used for both
 * `gen_ai.response.finish_reasons` and the `finish_reason` of `gen_ai.output.messages`.
 */
export function genAiFinishReason(reason: string): string {
  return reason === 'tool_calls' ? 'tool_call' : reason;
}

// ── Metrics ─────────────────────────────────────────────────────────────────────────────────────

/** Histogram, seconds: how long the model call of a step took (until the message was complete or failed). */
export const METRIC_GEN_AI_CLIENT_OPERATION_DURATION = 'gen_ai.client.operation.duration';
/** Histogram, `{token}`: input and output tokens per step, by `gen_ai.token.type`. */
export const METRIC_GEN_AI_CLIENT_TOKEN_USAGE = 'gen_ai.client.token.usage';
/**
 * Counter, `USD`: what the tokens of each step cost, by `gen_ai.token.type` (the attributes of
 * `gen_ai.client.token.usage`), from the kernel's prices (the usage ledger's); nothing for a model
 * without a price. kosong's own: the GenAI conventions define no cost metric.
 */
export const METRIC_KOSONG_CLIENT_COST = 'kosong.client.cost';
/** Counter, `{call}`: tool calls the model made (executed or not), by `gen_ai.tool.name`. */
export const METRIC_KOSONG_TOOL_CALLS = 'kosong.tool.calls';
/** Counter, `{call}`: tool calls that ended in an error, by `gen_ai.tool.name` and `error.type`. */
export const METRIC_KOSONG_TOOL_ERRORS = 'kosong.tool.errors';

/** Bucket boundaries the conventions advise for `gen_ai.client.operation.duration` (seconds). */
export const OPERATION_DURATION_BUCKETS: readonly number[] = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92];
/** Bucket boundaries the conventions advise for `gen_ai.client.token.usage`. */
export const TOKEN_USAGE_BUCKETS: readonly number[] = [
  1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864,
];
