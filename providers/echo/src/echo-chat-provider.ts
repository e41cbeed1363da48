import {
  ChatProviderError,
  extractText,
  noGenerationOptions,
  resolveGenerationOptions,
  updateGenerationOptions,
  type ChatProvider,
  type GenerationOptions,
  type Message,
  type ProviderGenerateOptions,
  type StreamedMessage,
  type ThinkingEffort,
  type Tool,
} from '@kosong/core';

import { streamEchoScript, type EchoStreamOptions } from './echo-stream.js';
import { RequestLog, type RecordedRequest } from './request-log.js';

/** Options of an {@link EchoChatProvider}. */
export type EchoChatProviderOptions = EchoStreamOptions;

/**
 * A provider that streams what the user asked for: the text of the last history message (which
 * must be a user message) is an echo DSL script (see {@link parseEchoScript}), and the response is
 * the parts it describes. System prompt and tools are ignored.
 *
 * `generate` rejects with the script's simulated error (`error:` lines), an `EchoScriptError` for a
 * malformed script, or a `ChatProviderError` when the history is empty, the last message is not
 * from the user, or the script has no parts. An aborted signal rejects it with the signal's reason.
 *
 * Generation options are taken (a bad value is an `InvalidGenerationOptionError`) and recorded in
 * {@link EchoChatProvider.requests}; they do not change what is streamed.
 */
export class EchoChatProvider implements ChatProvider {
  readonly name = 'echo';
  readonly modelName = 'echo';
  readonly thinkingEffort: ThinkingEffort | undefined;
  private configured: GenerationOptions = noGenerationOptions();
  private readonly log = new RequestLog();

  constructor(
    private readonly options: EchoChatProviderOptions = {},
    thinkingEffort?: ThinkingEffort,
  ) {
    this.thinkingEffort = thinkingEffort;
  }

  async generate(
    systemPrompt: string,
    tools: readonly Tool[],
    history: readonly Message[],
    options: ProviderGenerateOptions = {},
  ): Promise<StreamedMessage> {
    options.signal?.throwIfAborted();
    const generation = resolveGenerationOptions(this.name, this.configured, options.generation, tools);
    this.log.record({ systemPrompt, tools, history, generation, thinkingEffort: this.thinkingEffort });
    const last = history.at(-1);
    if (last === undefined) throw new ChatProviderError('EchoChatProvider requires at least one message in history.');
    if (last.role !== 'user') throw new ChatProviderError('EchoChatProvider expects the last history message to be user.');
    return streamEchoScript(extractText(last), 'EchoChatProvider', this.options, options.signal);
  }

  /** The generation options set with {@link EchoChatProvider.withGeneration}. */
  get generation(): GenerationOptions {
    return this.configured;
  }

  /** What the recent `generate` calls asked for, oldest first (the last 1000). */
  get requests(): readonly RecordedRequest[] {
    return this.log.entries;
  }

  /** A copy with the effort recorded (the echo provider does not think). */
  withThinking(effort: ThinkingEffort): EchoChatProvider {
    const copy = new EchoChatProvider(this.options, effort);
    copy.configured = this.configured;
    return copy;
  }

  /** A copy with these generation options merged over its own (recorded, not acted on). */
  withGeneration(options: GenerationOptions): EchoChatProvider {
    const copy = new EchoChatProvider(this.options, this.thinkingEffort);
    copy.configured = updateGenerationOptions(this.configured, options, this.name);
    return copy;
  }
}
