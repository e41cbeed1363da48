import type { Message } from '../message/message.js';
import { PendingPart } from '../message/merge.js';
import type { ContentPart, StreamedMessagePart, ToolCall } from '../message/parts.js';
import type { ChatProvider, FinishReason, ProviderGenerateOptions, ProviderSwitch, StreamedMessage } from '../provider/chat-provider.js';
import { APIEmptyResponseError, ChatProviderError } from '../provider/errors.js';
import { newCallOptions, resolveCallGeneration, type ResolvedGeneration } from '../provider/call-generation.js';
import type { GenerationOptions } from '../provider/generation-options.js';
import type { OutputFormat } from '../provider/output-format.js';
import type { TokenUsage } from '../provider/token-usage.js';
import type { Tool } from '../tooling/tool.js';
import { raceAbort } from './abort.js';
import { append } from './append.js';
import type { IdleWatch } from './timeout-budgets.js';

/**
 * The outcome of one generation.
 *
 * @typeParam TOutput - the type of the structured output, when one was asked for.
 */
export interface GenerateResult<TOutput = unknown> {
  /** The provider's id of the message. */
  readonly id: string | undefined;
  /** The merged assistant message. */
  readonly message: Message;
  readonly usage: TokenUsage | undefined;
  readonly finishReason: FinishReason | undefined;
  readonly traceId: string | undefined;
  /**
   * The structured output, parsed and validated (see the `output` option): set when one was asked
   * for and the message has no tool calls (a model calling tools has not answered yet).
   */
  readonly output?: TOutput;
}

/**
 * What the stream loop reports as it goes. Both are called unguarded: wrap user code before. Called
 * as methods of the observer (a step is its own observer: no closure per step).
 */
export interface StreamObserver {
  /** Each raw part, before it is merged; awaited when it returns a promise. */
  readonly onPart?: ((part: StreamedMessagePart) => Promise<void> | undefined) | undefined;
  /**
   * A tool call is complete: the next part did not merge into it, or the stream ended (`atEnd`,
   * with the finish reason the provider reported). `content` is the message's content so far: a
   * list that only grows by whole parts while the stream goes on (read it, never keep a copy of it
   * for later as it is).
   */
  readonly onToolCall?:
    | ((call: ToolCall, atEnd: { readonly finishReason: FinishReason | undefined } | undefined, content: readonly ContentPart[]) => void)
    | undefined;
}

/**
 * What comes after the stream, for {@link streamMessageThen}: like the two callbacks of
 * `promise.then(done, failed)`, called as methods of this object.
 */
export interface StreamEnd<T> {
  /** The response is complete and merged. */
  done(generated: GenerateResult): T | Promise<T>;
  /** The stream failed (the provider's error, the signal's reason, a bad part, an empty response). */
  failed(error: unknown): T | Promise<T>;
}

/** Inputs of {@link streamMessage}. */
export interface StreamMessageInput {
  readonly provider: ChatProvider;
  readonly systemPrompt: string;
  readonly tools: readonly Tool[];
  readonly history: readonly Message[];
  readonly signal: AbortSignal | undefined;
  /** Generation options of this call (merged over the provider's own, once, before the provider is called). */
  readonly generation: GenerationOptions | undefined;
  /** The structured output asked for, if any. */
  readonly output?: OutputFormat | undefined;
  /** Where the provider reports moving the call to another model (see `ProviderGenerateOptions.onProviderSwitch`). */
  readonly onProviderSwitch?: ((change: ProviderSwitch) => void) | undefined;
  /** The step's idle budget, told of each part (none: nothing is counted). */
  readonly idleWatch?: IdleWatch | undefined;
}

/**
 * Streams one response from the provider and merges it into one assistant message (kosong spec §3).
 * Rejects with the signal's reason as soon as the signal aborts, even if the provider is slow to
 * notice; after that, nothing more is reported to the observer.
 */
export function streamMessage(input: StreamMessageInput, observer: StreamObserver): Promise<GenerateResult> {
  return raceAbort(consume(input, observer, undefined), input.signal);
}

/**
 * {@link streamMessage}, then `end.done(result)` or `end.failed(error)`: the same outcome as
 * `streamMessage(input, observer).then(done, failed)`. Without a signal the loop calls `end` itself,
 * so that a stream in flight holds one promise and no chained one (thousands of steps may stream
 * at once); with a signal, the abort race sits between the loop and `end`.
 */
export function streamMessageThen<T>(input: StreamMessageInput, observer: StreamObserver, end: StreamEnd<T>): Promise<T> {
  if (input.signal === undefined) return consume(input, observer, end);
  return raceAbort(consume(input, observer, undefined), input.signal).then(
    (generated) => end.done(generated),
    (error: unknown) => end.failed(error),
  );
}

function consume<T>(input: StreamMessageInput, observer: StreamObserver, end: StreamEnd<T>): Promise<T>;
function consume(input: StreamMessageInput, observer: StreamObserver, end: undefined): Promise<GenerateResult>;
/**
 * The stream loop. Its frame is kept for the length of the stream, so it holds few variables: the
 * request is made, and the message built, by helpers.
 */
async function consume<T>(input: StreamMessageInput, observer: StreamObserver, end: StreamEnd<T> | undefined): Promise<T | GenerateResult> {
  let generated: GenerateResult;
  try {
    const signal = input.signal;
    const stream = await request(input);
    signal?.throwIfAborted();
    const builder = new MessageBuilder(input.provider.name, observer);
    const watch = input.idleWatch;
    for await (const part of stream) {
      if (signal?.aborted) throw signal.reason;
      if (watch !== undefined) watch.parts++;
      if (observer.onPart !== undefined && typeof part === 'object' && part !== null) {
        const delivered = observer.onPart(part);
        if (delivered) {
          if (watch !== undefined) watch.busy = true;
          await delivered;
          if (watch !== undefined) watch.busy = false;
          if (signal?.aborted) throw signal.reason;
        }
      }
      builder.accept(part);
    }
    generated = builder.result(stream);
  } catch (error) {
    if (end === undefined) throw error;
    return end.failed(error);
  }
  return end === undefined ? generated : end.done(generated);
}

/**
 * Asks the provider for the stream, after checking the signal and resolving the generation options
 * once: a bad per-call option is a typed error whatever the provider does, and the provider gets the
 * resolved options (`resolvedGeneration`) instead of resolving them again.
 */
function request(input: StreamMessageInput): Promise<StreamedMessage> {
  const { provider, signal, generation } = input;
  signal?.throwIfAborted();
  const resolved = resolveCallGeneration(provider, generation, input.tools);
  const options = providerOptions(signal, generation, input.output, resolved);
  const onSwitch = input.onProviderSwitch;
  if (onSwitch !== undefined) Object.defineProperty(options, 'onProviderSwitch', { value: onSwitch });
  return provider.generate(input.systemPrompt, input.tools, input.history, options);
}

function providerOptions(
  signal: AbortSignal | undefined,
  generation: GenerationOptions | undefined,
  output: OutputFormat | undefined,
  resolved: ResolvedGeneration,
): ProviderGenerateOptions {
  // the keys a provider enumerates: all three with an output, else those set
  const options = newCallOptions(resolved);
  if (output !== undefined) {
    options['signal'] = signal;
    options['generation'] = generation;
    options['output'] = output;
    return options;
  }
  if (signal) options['signal'] = signal;
  if (generation !== undefined) options['generation'] = generation;
  return options;
}

const NO_CONTENT: readonly ContentPart[] = Object.freeze([]);

/** Merges streamed parts into message content and tool calls, reporting each complete tool call. */
class MessageBuilder {
  private contentList: ContentPart[] | undefined;
  private toolCallList: ToolCall[] | undefined;
  /** The part being merged (the next part may still merge into it). */
  private pending: PendingPart | undefined;

  constructor(
    private readonly providerName: string,
    private readonly observer: StreamObserver,
  ) {}

  /** Merges the next streamed part (a complete tool call is reported when the part after it does not merge into it). */
  accept(part: StreamedMessagePart): void {
    if (typeof part !== 'object' || part === null) {
      throw new ChatProviderError(`Provider "${this.providerName}" streamed a part that is not an object: ${String(part)}`);
    }
    const pending = this.pending;
    if (pending === undefined) {
      this.pending = new PendingPart(part);
    } else if (!pending.absorb(part)) {
      this.add(pending.build(), undefined);
      this.pending = new PendingPart(part);
    }
  }

  /** The stream ended: the last part is complete; the merged message. */
  result(stream: StreamedMessage): GenerateResult {
    if (this.pending !== undefined) this.add(this.pending.build(), { finishReason: stream.finishReason });
    const content = this.contentList ?? [];
    const toolCalls = this.toolCallList ?? [];
    // A refusal (finish reason content_filter) is an answer, however little came: never an empty response to retry.
    if (stream.finishReason !== 'content_filter') checkNotEmpty(content, toolCalls);
    const message: Message = toolCalls.length > 0 ? { role: 'assistant', content, toolCalls } : { role: 'assistant', content };
    return { id: stream.id, message, usage: stream.usage, finishReason: stream.finishReason, traceId: stream.traceId };
  }

  private add(part: StreamedMessagePart, atEnd: { readonly finishReason: FinishReason | undefined } | undefined): void {
    switch (part.type) {
      case 'text':
      case 'think':
      case 'image_url':
      case 'audio_url':
      case 'video_url':
        this.contentList = append(this.contentList, part);
        return;
      case 'function':
        this.toolCallList = append(this.toolCallList, part);
        this.observer.onToolCall?.(part, atEnd, this.contentList ?? NO_CONTENT);
        return;
      case 'tool_call_part':
        return; // an orphan fragment: no tool call before it to merge into
      default:
        throw new ChatProviderError(`Provider "${this.providerName}" streamed a part of unknown type: ${describePart(part)}`);
    }
  }
}

function checkNotEmpty(content: readonly ContentPart[], toolCalls: readonly ToolCall[]): void {
  if (toolCalls.length > 0) return;
  if (content.length === 0) throw new APIEmptyResponseError('The API returned an empty response.');
  let hasThink = false;
  for (const part of content) {
    if (part.type === 'text' && part.text.trim() !== '') return;
    if (part.type === 'think') hasThink = true;
  }
  if (hasThink) {
    throw new APIEmptyResponseError(
      'The API returned a response containing only thinking content without any text or tool calls. ' +
        'This usually indicates the stream was interrupted or the output token budget was exhausted during reasoning.',
    );
  }
}

function describePart(part: unknown): string {
  try {
    return JSON.stringify(part)?.slice(0, 200) ?? String(part);
  } catch {
    return String(part);
  }
}
