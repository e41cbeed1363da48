/**
 * The parts of an AI SDK model's stream (`LanguageModelV2/V3/V4StreamPart`) as kosong parts.
 *
 * @module
 */
import type { LanguageModelV2StreamPart, LanguageModelV3StreamPart } from '@ai-sdk/provider';
import type { LanguageModelV4StreamPart } from './spec-v4.js';
import {
  audioURLPart,
  imageURLPart,
  textPart,
  thinkPart,
  toolCall,
  toolCallPart,
  videoURLPart,
  type StreamedMessagePart,
} from '@kosong/core';
import {
  APIConnectionError,
  ChatProviderError,
  tokenUsage,
  UnsupportedGenerationOptionError,
  UnsupportedOutputError,
  type FinishReason,
  type TokenUsage,
} from '@kosong/core/provider-kit';

import type { StreamConverter } from './ai-sdk-stream.js';
import { encodeReasoningMetadata, mergeMetadata, toolCallExtras, type ProviderMetadata } from './provider-metadata.js';

/** A part of a stream of any of the three specs. */
export type StreamPart = LanguageModelV4StreamPart | LanguageModelV3StreamPart | LanguageModelV2StreamPart;

type FinishPart = Extract<StreamPart, { type: 'finish' }>;
type V4Usage = Extract<LanguageModelV4StreamPart, { type: 'finish' }>['usage'];
type V2Usage = Extract<LanguageModelV2StreamPart, { type: 'finish' }>['usage'];

const FINISH_REASONS: Readonly<Record<string, FinishReason>> = {
  stop: 'stop',
  length: 'length',
  'content-filter': 'content_filter',
  'tool-calls': 'tool_calls',
  error: 'other',
  other: 'other',
  unknown: 'other',
};

/** A call whose input streamed as tool-call parts: the input streamed. */
interface StreamedCall {
  readonly id: string;
  text: string;
}

/**
 * Turns the parts of one stream into kosong parts, and gathers what the stream tells about the
 * message (id, usage, finish reason):
 *
 * - `text-delta` → a text part; `reasoning-delta` → a think part; the provider metadata of a
 *   reasoning block (start, deltas, end) → `encrypted` of an empty think part at its end, which
 *   closes the block's think part (see `provider-metadata.ts`);
 * - `tool-input-start` → a tool call with no arguments yet, each `tool-input-delta` → a tool-call
 *   part: the call streams, and the runtime dispatches it as soon as the next part comes (the next
 *   call's start, text: what ends a call's input in kosong's stream), while the model still streams.
 *   `tool-call` completes a streamed call (with what its input has beyond the deltas), or is a whole
 *   call (a model that sends no deltas; a call whose deltas are raw text, `inputEncoding: 'text'`).
 *   A call whose input goes on after another part came (a model that interleaves the inputs of
 *   parallel calls) was dispatched with the input it had then: a `ChatProviderError`;
 * - calls the provider runs itself (`providerExecuted`) and their results are not client calls:
 *   left out;
 * - `file` parts of images, audio and video → media parts (`data:` URIs, or the URL);
 * - `response-metadata` → the message id; `finish` → finish reason and usage;
 * - `stream-start` warnings that the model dropped an option the call set → an
 *   `UnsupportedGenerationOptionError` (or `UnsupportedOutputError` for `responseFormat`);
 * - `error` → thrown (its payload, for the stream to convert);
 * - the rest (`source`, `raw`, `tool-approval-request`, `custom`, `reasoning-file`, `ping`, parts of
 *   newer specs) is left out.
 */
export class PartConverter implements StreamConverter {
  /** The message id, from `response-metadata`. */
  id: string | undefined;
  /** The model id the response names, from `response-metadata`. */
  responseModelId: string | undefined;
  usage: TokenUsage | undefined;
  finishReason: FinishReason | undefined;
  /** Reasoning tokens of the output (counted in `usage.output` too), when the model reports them. */
  reasoningTokens: number | undefined;
  /** The provider metadata of the `finish` part. */
  providerMetadata: ProviderMetadata | undefined;
  /** The warnings of `stream-start`. */
  warnings: readonly unknown[] = [];
  /** Whether the `finish` part came. */
  finished = false;
  #interrupted = false;
  /** The call whose tool-call parts are the last parts written: its input can go on. */
  #open: StreamedCall | undefined;
  /** The calls that streamed and were ended by a later part, by id. */
  readonly #ended = new Map<string, StreamedCall>();
  /** Calls that are not streamed (provider-executed ones: `true`, left out) by id. */
  readonly #whole = new Map<string, boolean>();
  readonly #reasoning = new Map<string, ProviderMetadata | undefined>();

  /**
   * @param provider the bridge's name, for refusals.
   * @param asked the options the call set (see `callOptions`), which a warning may refuse.
   */
  constructor(
    private readonly provider: string,
    private readonly asked: ReadonlySet<string>,
  ) {}

  /** Converts one part, writing the kosong parts it makes to `out`. Throws an `error` part's payload. */
  push(value: unknown, out: StreamedMessagePart[]): void {
    const part = value as StreamPart;
    switch (part.type) {
      case 'text-delta':
        if (part.delta !== '') this.#emit(textPart(part.delta), out);
        return;
      case 'tool-input-delta':
        this.#inputDelta(part.id, part.delta, out);
        return;
      case 'reasoning-start':
        this.#reasoning.set(part.id, mergeMetadata(undefined, part.providerMetadata));
        return;
      case 'reasoning-delta':
        if (part.delta !== '') this.#emit(thinkPart(part.delta), out);
        if (part.providerMetadata !== undefined) this.#reasoning.set(part.id, mergeMetadata(this.#reasoning.get(part.id), part.providerMetadata));
        return;
      case 'reasoning-end': {
        const metadata = mergeMetadata(this.#reasoning.get(part.id), part.providerMetadata);
        this.#reasoning.delete(part.id);
        if (metadata !== undefined) this.#emit(thinkPart('', encodeReasoningMetadata(metadata)), out);
        return;
      }
      case 'tool-input-start':
        this.#inputStart(part, out);
        return;
      case 'tool-call':
        this.#call(part, out);
        return;
      case 'file':
        this.#file(part, out);
        return;
      case 'response-metadata':
        if (part.id !== undefined) this.id = part.id;
        if (part.modelId !== undefined) this.responseModelId = part.modelId;
        return;
      case 'stream-start':
        this.warnings = part.warnings;
        this.#refuse(part.warnings);
        return;
      case 'finish':
        this.#finish(part);
        return;
      case 'error':
        throw part.error;
      default:
        return; // text-start/end, tool-input-end, tool results of the provider's tools, sources, raw chunks, newer parts
    }
  }

  /**
   * The stream ended (nothing is held back: `out` gets nothing).
   *
   * @throws {APIConnectionError} when it ended before its `finish` part (or with the finish reason
   * `interrupted`): the response is incomplete.
   */
  end(_out: StreamedMessagePart[]): void {
    if (!this.finished || this.#interrupted) {
      throw new APIConnectionError(`The stream ended before the response was complete (${this.#interrupted ? 'finish reason "interrupted"' : 'no finish part'})`);
    }
  }

  /** Writes a part that is no fragment of the open call's input: it ends that call's input. */
  #emit(part: StreamedMessagePart, out: StreamedMessagePart[]): void {
    const open = this.#open;
    if (open !== undefined) {
      this.#ended.set(open.id, open);
      this.#open = undefined;
    }
    out.push(part);
  }

  #inputStart(part: Extract<StreamPart, { type: 'tool-input-start' }>, out: StreamedMessagePart[]): void {
    if (part.providerExecuted === true) {
      this.#whole.set(part.id, true);
      return;
    }
    if ('inputEncoding' in part && part.inputEncoding === 'text') {
      this.#whole.set(part.id, false);
      return;
    }
    this.#emit(toolCall(part.id, part.toolName, null, toolCallExtras(mergeMetadata(undefined, part.providerMetadata))), out);
    this.#open = { id: part.id, text: '' };
  }

  #inputDelta(id: string, delta: string, out: StreamedMessagePart[]): void {
    const open = this.#open;
    if (open !== undefined && open.id === id && delta !== '') {
      open.text += delta;
      out.push(toolCallPart(delta));
    }
    // a call that comes whole, one of the provider's, or one whose input another part ended (its `tool-call` tells)
  }

  #call(part: Extract<StreamPart, { type: 'tool-call' }>, out: StreamedMessagePart[]): void {
    const id = part.toolCallId;
    if (part.providerExecuted === true || this.#whole.get(id) === true) return;
    const open = this.#open;
    if (open !== undefined && open.id === id) {
      const rest = remainingInput(open.text, part.input);
      if (rest === undefined) throw inputMismatch(id, part.toolName, 'differs from the input it streamed');
      if (rest !== '') out.push(toolCallPart(rest));
      return;
    }
    const ended = this.#ended.get(id);
    if (ended !== undefined) {
      this.#ended.delete(id);
      if (remainingInput(ended.text, part.input) !== '') throw inputMismatch(id, part.toolName, 'went on after another part had ended it (the call was dispatched with the input it had then)');
      return;
    }
    this.#whole.delete(id);
    this.#emit(toolCall(id, part.toolName, part.input, toolCallExtras(mergeMetadata(undefined, part.providerMetadata))), out);
  }

  #file(part: Extract<StreamPart, { type: 'file' }>, out: StreamedMessagePart[]): void {
    const data: unknown = part.data;
    let url: string;
    if (typeof data === 'string') url = `data:${part.mediaType};base64,${data}`;
    else if (data instanceof Uint8Array) url = `data:${part.mediaType};base64,${Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('base64')}`;
    else {
      const tagged = data as { type?: string; data?: string | Uint8Array; url?: URL };
      if (tagged.type === 'url' && tagged.url !== undefined) url = String(tagged.url);
      else if (tagged.type === 'data' && tagged.data !== undefined) {
        const bytes = tagged.data;
        url = `data:${part.mediaType};base64,${typeof bytes === 'string' ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64')}`;
      } else return;
    }
    const kind = part.mediaType.split('/', 1)[0];
    if (kind === 'image') this.#emit(imageURLPart(url), out);
    else if (kind === 'audio') this.#emit(audioURLPart(url), out);
    else if (kind === 'video') this.#emit(videoURLPart(url), out);
  }

  #finish(part: FinishPart): void {
    this.finished = true;
    this.providerMetadata = mergeMetadata(undefined, part.providerMetadata);
    const reason = part.finishReason;
    const unified = typeof reason === 'string' ? reason : reason.unified;
    if (unified === 'interrupted') this.#interrupted = true;
    this.finishReason = FINISH_REASONS[unified] ?? 'other';
    if (isV2Usage(part.usage)) this.#v2Usage(part.usage);
    else this.#usage(part.usage);
  }

  #usage(usage: V4Usage): void {
    const { inputTokens: input, outputTokens: output } = usage;
    this.reasoningTokens = output.reasoning;
    if (input.total === undefined && input.noCache === undefined && output.total === undefined && output.text === undefined) return;
    const inputCacheRead = input.cacheRead ?? 0;
    const inputCacheCreation = input.cacheWrite ?? 0;
    this.usage = tokenUsage({
      inputOther: input.noCache ?? Math.max(0, (input.total ?? 0) - inputCacheRead - inputCacheCreation),
      inputCacheRead,
      inputCacheCreation,
      output: output.total ?? (output.text ?? 0) + (output.reasoning ?? 0),
    });
  }

  #v2Usage(usage: V2Usage): void {
    this.reasoningTokens = usage.reasoningTokens;
    if (usage.inputTokens === undefined && usage.outputTokens === undefined) return;
    const inputCacheRead = usage.cachedInputTokens ?? 0;
    this.usage = tokenUsage({ inputOther: Math.max(0, (usage.inputTokens ?? 0) - inputCacheRead), inputCacheRead, output: usage.outputTokens ?? 0 });
  }

  /** Refuses what the model says it dropped of what the call set (it sent the request without it). */
  #refuse(warnings: readonly unknown[]): void {
    for (const warning of warnings) {
      const { type, feature, setting, details } = warning as { type?: unknown; feature?: unknown; setting?: unknown; details?: unknown };
      const option = type === 'unsupported' ? feature : type === 'unsupported-setting' ? setting : undefined;
      if (typeof option !== 'string' || !this.asked.has(option)) continue;
      const reason = typeof details === 'string' ? `the model dropped it (${details})` : 'the model dropped it';
      if (option === 'responseFormat') throw new UnsupportedOutputError(this.provider, reason);
      throw new UnsupportedGenerationOptionError(this.provider, option, reason);
    }
  }
}

function inputMismatch(id: string, toolName: string, what: string): ChatProviderError {
  return new ChatProviderError(`The model's tool call ${JSON.stringify(id)} (${toolName}) has an input that ${what}`);
}

function isV2Usage(usage: FinishPart['usage']): usage is V2Usage {
  return typeof (usage as { inputTokens?: unknown }).inputTokens !== 'object';
}

/**
 * What a call's final input has beyond the input it streamed: `''` when they are the same, the
 * rest when the streamed input is its start, the empty rest when both are the same JSON;
 * `undefined` when they differ.
 */
function remainingInput(streamed: string, input: string): string | undefined {
  if (input === streamed) return '';
  if (input.startsWith(streamed)) return input.slice(streamed.length);
  try {
    return JSON.stringify(JSON.parse(streamed)) === JSON.stringify(JSON.parse(input)) ? '' : undefined;
  } catch {
    return undefined;
  }
}
