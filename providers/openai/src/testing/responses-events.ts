/**
 * Builders of Responses API stream events, in the shapes the OpenAI API sends them (the `openai`
 * SDK's `ResponseStreamEvent` types): whole responses from a list of output items, and single events
 * for replies that misbehave on purpose.
 *
 * @module
 */

/** One output item of a scripted response. */
export type OutputItemScript =
  /** An assistant message whose text arrives in these deltas. */
  | { readonly type: 'message'; readonly text: readonly string[]; readonly id?: string }
  /** A function call whose arguments arrive in these deltas. */
  | { readonly type: 'function_call'; readonly callId: string; readonly name: string; readonly arguments: readonly string[]; readonly id?: string }
  /** A reasoning item: summaries (each as deltas), then its encrypted content (with `include`). */
  | { readonly type: 'reasoning'; readonly summary: readonly (readonly string[])[]; readonly encrypted?: string; readonly id?: string };

/** Usage as the API reports it. */
export interface ResponseUsage {
  readonly input_tokens: number;
  readonly output_tokens: number;
  readonly input_tokens_details?: { readonly cached_tokens?: number; readonly cache_write_tokens?: number };
  readonly output_tokens_details?: { readonly reasoning_tokens?: number };
  readonly total_tokens?: number;
}

/** How a scripted response ends. */
export interface ResponseEnding {
  /** The response id; default `resp_test`. */
  readonly id?: string;
  readonly model?: string;
  /** Default `{input_tokens: 10, output_tokens: <deltas>}`. */
  readonly usage?: ResponseUsage;
  /** `completed` (default) or `incomplete` (with {@link ResponseEnding.incompleteReason}). */
  readonly status?: 'completed' | 'incomplete';
  readonly incompleteReason?: 'max_output_tokens' | 'content_filter';
}

/** The response object of `response.created` / `response.completed` events. */
export function responseObject(options: Omit<ResponseEnding, 'status'> & { readonly output?: readonly object[]; readonly status?: string }): Record<string, unknown> {
  const { id = 'resp_test', model = 'test-model', output = [], usage, status = 'in_progress', incompleteReason } = options;
  return {
    id,
    object: 'response',
    created_at: 1_700_000_000,
    status,
    error: null,
    incomplete_details: incompleteReason === undefined ? null : { reason: incompleteReason },
    model,
    output,
    parallel_tool_calls: true,
    store: false,
    usage: usage === undefined ? null : withTotal(usage),
  };
}

/**
 * Every event of one streamed response with these output items, in the order the API sends them:
 * `response.created`, `response.in_progress`; per item `response.output_item.added`, its deltas
 * (and the content part / summary part / `.done` events around them), `response.output_item.done`;
 * then `response.completed` (or `response.incomplete`) with the whole output and the usage.
 */
export function responseEvents(items: readonly OutputItemScript[], ending: ResponseEnding = {}): object[] {
  const sequence = { next: 0 };
  const event = (type: string, fields: Record<string, unknown>): object => ({ type, sequence_number: sequence.next++, ...fields });
  const events: object[] = [event('response.created', { response: responseObject(ending) }), event('response.in_progress', { response: responseObject(ending) })];
  const output: object[] = [];
  let deltas = 0;
  items.forEach((item, output_index) => {
    switch (item.type) {
      case 'message': {
        const item_id = item.id ?? `msg_${output_index}`;
        const text = item.text.join('');
        events.push(event('response.output_item.added', { output_index, item: { id: item_id, type: 'message', status: 'in_progress', role: 'assistant', content: [] } }));
        events.push(event('response.content_part.added', { item_id, output_index, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } }));
        for (const delta of item.text) events.push(event('response.output_text.delta', { item_id, output_index, content_index: 0, delta, logprobs: [] }));
        deltas += item.text.length;
        events.push(event('response.output_text.done', { item_id, output_index, content_index: 0, text, logprobs: [] }));
        events.push(event('response.content_part.done', { item_id, output_index, content_index: 0, part: { type: 'output_text', text, annotations: [] } }));
        const done = { id: item_id, type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] };
        events.push(event('response.output_item.done', { output_index, item: done }));
        output.push(done);
        return;
      }
      case 'function_call': {
        const item_id = item.id ?? `fc_${output_index}`;
        const args = item.arguments.join('');
        const base = { id: item_id, type: 'function_call', call_id: item.callId, name: item.name };
        events.push(event('response.output_item.added', { output_index, item: { ...base, arguments: '', status: 'in_progress' } }));
        for (const delta of item.arguments) events.push(event('response.function_call_arguments.delta', { item_id, output_index, delta }));
        deltas += item.arguments.length;
        events.push(event('response.function_call_arguments.done', { item_id, output_index, name: item.name, arguments: args }));
        const done = { ...base, arguments: args, status: 'completed' };
        events.push(event('response.output_item.done', { output_index, item: done }));
        output.push(done);
        return;
      }
      case 'reasoning': {
        const item_id = item.id ?? `rs_${output_index}`;
        events.push(event('response.output_item.added', { output_index, item: { id: item_id, type: 'reasoning', summary: [] } }));
        const summary: object[] = [];
        item.summary.forEach((parts, summary_index) => {
          const text = parts.join('');
          events.push(event('response.reasoning_summary_part.added', { item_id, output_index, summary_index, part: { type: 'summary_text', text: '' } }));
          for (const delta of parts) events.push(event('response.reasoning_summary_text.delta', { item_id, output_index, summary_index, delta }));
          deltas += parts.length;
          events.push(event('response.reasoning_summary_text.done', { item_id, output_index, summary_index, text }));
          events.push(event('response.reasoning_summary_part.done', { item_id, output_index, summary_index, part: { type: 'summary_text', text } }));
          summary.push({ type: 'summary_text', text });
        });
        const done = { id: item_id, type: 'reasoning', summary, ...(item.encrypted === undefined ? {} : { encrypted_content: item.encrypted }) };
        events.push(event('response.output_item.done', { output_index, item: done }));
        output.push(done);
        return;
      }
    }
  });
  const status = ending.status ?? 'completed';
  const usage = ending.usage ?? { input_tokens: 10, output_tokens: deltas };
  events.push(event(status === 'completed' ? 'response.completed' : 'response.incomplete', { response: responseObject({ ...ending, status, output, usage }) }));
  return events;
}

/** A `response.failed` event: the response ended with an error (e.g. `server_error`, `rate_limit_exceeded`). */
export function responseFailedEvent(code: string, message: string, id = 'resp_test'): object {
  return { type: 'response.failed', sequence_number: 99, response: { ...responseObject({ id, status: 'failed' }), error: { code, message } } };
}

/**
 * An `error` event, as the API sends one mid-stream: `flat` as the API reference shows it (`code`
 * and `message` on the event), `nested` as the API sends it (`{type: 'error', error: {type, code,
 * message, param}}`).
 */
export function errorEvent(code: string | null, message: string, form: 'flat' | 'nested' = 'flat'): object {
  if (form === 'nested') return { type: 'error', sequence_number: 99, error: { type: code ?? 'error', code, message, param: null } };
  return { type: 'error', sequence_number: 99, code, message, param: null };
}

function withTotal(usage: ResponseUsage): ResponseUsage {
  return usage.total_tokens === undefined ? { ...usage, total_tokens: usage.input_tokens + usage.output_tokens } : usage;
}
