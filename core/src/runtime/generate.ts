import { randomUUID } from '../random-uuid.js';
import { freezePart } from '../message/freeze.js';
import type { Message } from '../message/message.js';
import type { StreamedMessagePart, ToolCall } from '../message/parts.js';
import type { ChatProvider } from '../provider/chat-provider.js';
import type { GenerationOptions } from '../provider/generation-options.js';
import type { InferOutput, OutputOption } from '../output/output-schema.js';
import { parseOutput } from '../output/parse-output.js';
import { resolveOutput } from '../output/resolve-output.js';
import type { Tool } from '../tooling/tool.js';
import { HookGuard, hookSlot, type HookErrorHandler } from './hooks/hook-guard.js';
import { streamMessage, type GenerateResult } from './stream-message.js';

export type { GenerateResult } from './stream-message.js';

/**
 * Options of {@link generate}.
 *
 * @typeParam S - the structured output's schema, when one is asked for.
 */
export interface GenerateOptions<S extends OutputOption | undefined = OutputOption | undefined> {
  readonly provider: ChatProvider;
  readonly systemPrompt: string;
  readonly tools?: readonly Tool[];
  readonly history: readonly Message[];
  /** Aborting rejects `generate` with the signal's reason at once and cancels the request. */
  readonly signal?: AbortSignal;
  /** Generation options of this call, merged over the provider's own (per-call values win). */
  readonly generation?: GenerationOptions;
  /**
   * Structured output: a zod 4 schema, a JSON Schema, or `structuredOutput(schema, { name,
   * description })`. The provider is asked for JSON matching it (with its native feature); the text
   * is parsed and validated into `result.output` (typed from a zod schema). A response with tool
   * calls has no output. Throws an `InvalidOutputSchemaError` for a schema that cannot be used, an
   * `UnsupportedOutputError` from a provider that cannot ask for it, and a `StructuredOutputError`
   * (with the text and the issues) when the answer is not such JSON.
   */
  readonly output?: S;
  /** Each streamed part, before merging; the part is frozen and never changes. Awaited: the stream waits for it (as for `step`). */
  readonly onPart?: (part: StreamedMessagePart) => void | Promise<void>;
  /**
   * The former name of {@link GenerateOptions.onPart}, still honoured (its failures are reported as
   * `options.onMessagePart`).
   *
   * @deprecated Use `onPart`. Giving both is a `TypeError`: nothing is generated.
   */
  readonly onMessagePart?: (part: StreamedMessagePart) => void | Promise<void>;
  /**
   * Each complete tool call, as soon as the next part does not merge into it (or the stream ends).
   * Not awaited by the stream (as for `step`); `generate` resolves only after it settled.
   */
  readonly onToolCall?: (toolCall: ToolCall) => void | Promise<void>;
  /** Receives callback failures; default: one line on stderr. */
  readonly onHookError?: HookErrorHandler;
  /** How long an async callback may take before it is reported and no longer awaited. */
  readonly hookTimeoutMs?: number;
}

/**
 * Streams one model response and merges it into one assistant message.
 *
 * Merging follows the kosong rules (see `mergePart`). A tool call is reported as soon as it is
 * complete. Callbacks are guarded: a throw, a rejection or a timeout is reported to `onHookError`
 * and never fails the generation.
 *
 * @throws {@link APIEmptyResponseError} when the response has no content, or only thinking.
 * @throws {@link StructuredOutputError} when structured output was asked for and the answer does not match.
 * @throws the provider's {@link ChatProviderError} unchanged, or the signal's reason on abort.
 * @throws TypeError when both `onPart` and its deprecated alias `onMessagePart` are given.
 */
export async function generate<S extends OutputOption | undefined = undefined>(options: GenerateOptions<S>): Promise<GenerateResult<InferOutput<S>>> {
  const { onPart, onMessagePart, onToolCall } = options;
  if (onPart !== undefined && onMessagePart !== undefined) {
    throw new TypeError('generate(): both onPart and onMessagePart are given; onMessagePart is the deprecated name of onPart: give onPart only');
  }
  const output = options.output === undefined ? undefined : await resolveOutput(options.output);
  const guard = HookGuard.forStep(randomUUID(), { provider: options.provider, onHookError: options.onHookError, hookTimeoutMs: options.hookTimeoutMs });
  const partSlot = onPart ? hookSlot('options', 'onPart', onPart) : onMessagePart && hookSlot('options', 'onMessagePart', onMessagePart);
  const callSlot = onToolCall && hookSlot('options', 'onToolCall', onToolCall);
  const toolCallsDelivered: Promise<void>[] = [];
  const result = await streamMessage(
    {
      provider: options.provider,
      systemPrompt: options.systemPrompt,
      tools: options.tools ?? [],
      history: options.history,
      signal: options.signal,
      generation: options.generation,
      output: output?.format,
    },
    {
      onPart: partSlot && ((part) => guard.invoke(partSlot, freezePart(part))),
      onToolCall:
        callSlot &&
        ((call) => {
          // Frozen (its arguments too) before the callback sees it: it is the message's own call.
          const delivered = guard.invoke(callSlot, freezePart(call) as ToolCall);
          if (delivered) toolCallsDelivered.push(delivered);
        }),
    },
  );
  await Promise.all(toolCallsDelivered);
  if (output === undefined || (result.message.toolCalls?.length ?? 0) > 0) return result as GenerateResult<InferOutput<S>>;
  return { ...result, output: (await parseOutput(output, result)) as InferOutput<S> };
}
