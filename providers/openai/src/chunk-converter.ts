import { randomUUID } from 'node:crypto';

import { ChatProviderError, textPart, thinkPart, type FinishReason, type StreamedMessagePart, type TokenUsage } from '@kosong/core';

import { normalizeFinishReason } from './finish-reason.js';
import { streamError, type ResponseIds } from './stream-error.js';
import { StreamAssembler } from './stream-assembler.js';
import { usageFromChunk } from './usage.js';

/** How a {@link ChunkConverter} reads deltas. */
export interface ChunkConverterOptions {
  /** The delta field with reasoning text (e.g. `reasoning_content`); `undefined`: reasoning is ignored. */
  readonly reasoningKey: string | undefined;
  /** Whether an empty reasoning delta still gives a (empty) think part, as Kimi's does (spec §7.2). */
  readonly keepEmptyReasoning: boolean;
  /** Id for a tool call that came without one; default: a random UUID. */
  readonly generateId?: () => string;
}

type JsonRecord = Record<string, unknown>;

/**
 * Turns `chat.completion.chunk` objects into kosong parts, and remembers the message id, usage and
 * finish reason. Only the first choice (`index` 0) is read.
 *
 * Per chunk: reasoning → think part; `content` (and a `refusal`) → text part; `tool_calls` deltas →
 * tool calls and argument fragments, keyed by `index` ({@link StreamAssembler}). A chunk with an
 * `error` (a server or gateway that reports a failure after HTTP 200, a bad key or a rate limit as
 * well) is thrown as the error its code or type stands for: an `APIStatusError` with that status
 * (`invalid_api_key` → 401, `rate_limit_exceeded` → 429, a numeric `code` as it is, …), else an
 * `OpenAIStreamError` naming the code.
 */
export class ChunkConverter {
  /** The message id (the last non-empty chunk `id`). */
  id: string | undefined;
  /** The usage, from the last chunk that had one. */
  usage: TokenUsage | undefined;
  /** The finish reason of the first choice, once sent. */
  finishReason: FinishReason | undefined;
  readonly #assembler: StreamAssembler;
  #ids: ResponseIds = {};

  constructor(private readonly options: ChunkConverterOptions) {
    this.#assembler = new StreamAssembler(options.generateId ?? randomUUID);
  }

  /** Takes the response headers (before the first chunk): their request and trace ids go into the errors of the stream. */
  begin(headers: Headers): void {
    this.#ids = { requestId: headers.get('x-request-id') ?? undefined, traceId: headers.get('x-trace-id') ?? undefined };
  }

  /**
   * Reads one chunk; writes the parts it releases to `out`.
   *
   * @throws {ChatProviderError} (or a subclass) for a chunk with an `error`, a chunk that is not an
   * object, or tool-call deltas that make no sense.
   */
  push(chunk: unknown, out: StreamedMessagePart[]): void {
    if (!isRecord(chunk)) throw new ChatProviderError(`The server sent a stream chunk that is not a JSON object: ${preview(chunk)}`);
    if (chunk['error'] !== undefined && chunk['error'] !== null && chunk['error'] !== false) throw streamError('Chat Completions stream', 'an error', chunk['error'], this.#ids);
    if (typeof chunk['id'] === 'string' && chunk['id'] !== '') this.id = chunk['id'];
    const usage = usageFromChunk(chunk);
    if (usage !== undefined) this.usage = usage;
    const choices = chunk['choices'];
    if (!Array.isArray(choices) || choices.length === 0) return;
    const choice: unknown = choices[0];
    if (!isRecord(choice) || (typeof choice['index'] === 'number' && choice['index'] !== 0)) return;
    const delta = choice['delta'];
    if (isRecord(delta)) this.#delta(delta, out);
    const finish = choice['finish_reason'];
    if (typeof finish === 'string' && finish !== '') this.finishReason = normalizeFinishReason(finish);
  }

  /**
   * The stream ended: writes what was held back to `out`.
   *
   * @throws {ChatProviderError} if a tool call never got a name.
   */
  end(out: StreamedMessagePart[]): void {
    this.#assembler.finish(out);
  }

  #delta(delta: JsonRecord, out: StreamedMessagePart[]): void {
    const { reasoningKey } = this.options;
    if (reasoningKey !== undefined) {
      const reasoning = delta[reasoningKey];
      if (typeof reasoning === 'string' && (reasoning !== '' || this.options.keepEmptyReasoning)) {
        this.#assembler.content(thinkPart(reasoning), out);
      }
    }
    const content = delta['content'];
    if (typeof content === 'string' && content !== '') this.#assembler.content(textPart(content), out);
    const refusal = delta['refusal'];
    if (typeof refusal === 'string' && refusal !== '') this.#assembler.content(textPart(refusal), out);
    const toolCalls = delta['tool_calls'];
    if (!Array.isArray(toolCalls)) return;
    for (const call of toolCalls) {
      if (!isRecord(call)) continue;
      const fn = isRecord(call['function']) ? call['function'] : {};
      this.#assembler.toolCall(
        {
          index: typeof call['index'] === 'number' ? call['index'] : undefined,
          id: typeof call['id'] === 'string' ? call['id'] : undefined,
          name: typeof fn['name'] === 'string' ? fn['name'] : undefined,
          arguments: typeof fn['arguments'] === 'string' ? fn['arguments'] : undefined,
        },
        out,
      );
    }
  }
}

function isRecord(value: unknown): value is JsonRecord {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function preview(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
