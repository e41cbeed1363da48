import {
  ChatProviderError,
  extractText,
  type ChatProvider,
  type Message,
  type ProviderGenerateOptions,
  type StreamedMessage,
  type ThinkingEffort,
  type Tool,
} from '@kosong/core';

import { streamEchoScript, type EchoStreamOptions } from './echo-stream.js';

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
 */
export class EchoChatProvider implements ChatProvider {
  readonly name = 'echo';
  readonly modelName = 'echo';
  readonly thinkingEffort: ThinkingEffort | undefined;

  constructor(
    private readonly options: EchoChatProviderOptions = {},
    thinkingEffort?: ThinkingEffort,
  ) {
    this.thinkingEffort = thinkingEffort;
  }

  async generate(
    _systemPrompt: string,
    _tools: readonly Tool[],
    history: readonly Message[],
    options: ProviderGenerateOptions = {},
  ): Promise<StreamedMessage> {
    options.signal?.throwIfAborted();
    const last = history.at(-1);
    if (last === undefined) throw new ChatProviderError('EchoChatProvider requires at least one message in history.');
    if (last.role !== 'user') throw new ChatProviderError('EchoChatProvider expects the last history message to be user.');
    return streamEchoScript(extractText(last), 'EchoChatProvider', this.options, options.signal);
  }

  /** A copy with the effort recorded (the echo provider does not think). */
  withThinking(effort: ThinkingEffort): EchoChatProvider {
    return new EchoChatProvider(this.options, effort);
  }
}
