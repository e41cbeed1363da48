import { extractText, type Message, type Tool } from '@kosong/core';
import { BaseChatProvider, ChatProviderError, type ProviderChanges, type ProviderGenerateOptions, type StreamedMessage, type ThinkingEffort } from '@kosong/core/provider-kit';

import { splitEchoSteps } from './echo-steps.js';
import { streamEchoScript, type EchoStreamOptions } from './echo-stream.js';
import { RequestLog, type RecordedRequest } from './request-log.js';

/** Options of an {@link EchoChatProvider}. */
export type EchoChatProviderOptions = EchoStreamOptions;

/**
 * A provider that streams what the user asked for: the text of the last user message is an echo
 * DSL script (see {@link parseEchoScript}), and the response is the parts it describes. A script
 * may describe several steps of an agent turn, separated by lines of `---` (see
 * {@link splitEchoSteps}): the response plays the step whose number is the number of assistant
 * messages after that user message, so step 1 can call tools and step 2 answer after their results.
 * System prompt and tools are ignored.
 *
 * `generate` rejects with the script's simulated error (`error:` lines), an `EchoScriptError` for a
 * malformed script, or a `ChatProviderError` when the history has no user message, the script has
 * no step for this point of the turn, or the step has no parts. An aborted signal rejects it with
 * the signal's reason.
 *
 * Generation options are taken (a bad value is an `InvalidGenerationOptionError`) and recorded in
 * {@link EchoChatProvider.requests}; they do not change what is streamed.
 */
export class EchoChatProvider extends BaseChatProvider {
  readonly name = 'echo';
  readonly modelName = 'echo';
  private readonly log = new RequestLog();

  constructor(
    private readonly options: EchoChatProviderOptions = {},
    thinkingEffort?: ThinkingEffort,
  ) {
    super({ thinkingEffort });
  }

  async generate(
    systemPrompt: string,
    tools: readonly Tool[],
    history: readonly Message[],
    options: ProviderGenerateOptions = {},
  ): Promise<StreamedMessage> {
    options.signal?.throwIfAborted();
    const generation = this.generationFor(tools, options);
    this.log.record({ systemPrompt, tools, history, generation, thinkingEffort: this.thinkingEffort, output: options.output });
    if (history.length === 0) throw new ChatProviderError('EchoChatProvider requires at least one message in history.');
    const userIndex = history.findLastIndex((message) => message.role === 'user');
    if (userIndex < 0) throw new ChatProviderError('EchoChatProvider needs a user message in history: its text is the script to play.');
    const answered = history.slice(userIndex + 1).filter((message) => message.role === 'assistant').length;
    const steps = splitEchoSteps(extractText(history[userIndex]!));
    const step = steps[answered];
    if (step === undefined) {
      throw new ChatProviderError(
        `EchoChatProvider: the script of the last user message has ${plural(steps.length, 'step')}, and step ${answered + 1} ` +
          `was asked for (the model has answered it ${plural(answered, 'time')}); write the response of each step of the turn, ` +
          `separated by lines of '---' (e.g. a tool call, then '---', then the text after its result).`,
      );
    }
    return streamEchoScript(step, 'EchoChatProvider', this.options, options.signal);
  }

  /** What the recent `generate` calls asked for, oldest first (the last 1000). */
  get requests(): readonly RecordedRequest[] {
    return this.log.entries;
  }

  /** Copies (`withThinking`, `withGeneration`, which record what they are given and do not act on it) keep their own request log. */
  protected override copyWith(changes: ProviderChanges): this {
    return super.copyWith({ log: new RequestLog(), ...changes });
  }
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}
