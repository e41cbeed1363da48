import type { Message, Tool } from '@kosong/core';
import { BaseChatProvider, ChatProviderError, type ProviderChanges, type ProviderGenerateOptions, type StreamedMessage, type ThinkingEffort } from '@kosong/core/provider-kit';

import { splitEchoSteps, type EchoScriptStep } from './echo-steps.js';
import { streamEchoScript, type EchoStreamOptions } from './echo-stream.js';
import { RequestLog, type RecordedRequest } from './request-log.js';

/** Options of a {@link ScriptedEchoChatProvider}. */
export interface ScriptedEchoChatProviderOptions extends EchoStreamOptions {
  /**
   * Called with `SCRIPTED_ECHO TURN <n>: <script as JSON>` each time a script is taken from the
   * queue (the original's `trace` printed this line).
   */
  readonly trace?: (line: string) => void;
}

/**
 * A provider that plays a queue of echo DSL scripts (see {@link parseEchoScript}), one per
 * `generate` call, first in first out, whatever the history, system prompt and tools. For
 * multi-step agent tests and demos: script 1 calls a tool, script 2 answers with text, and so on.
 * A script with `---` separator lines (see {@link splitEchoSteps}) counts as its steps, one after
 * the other in the queue.
 *
 * A script is consumed by the call that takes it even when it fails to parse or ends in an
 * `error:` line, so a retry gets the next script. A call with an already-aborted signal rejects
 * with the signal's reason and consumes nothing. When the queue is empty, `generate` rejects with
 * `ChatProviderError("ScriptedEchoChatProvider exhausted at turn N.")`.
 *
 * Generation options are taken (a bad value is an `InvalidGenerationOptionError` and consumes
 * nothing) and recorded in {@link ScriptedEchoChatProvider.requests}; they do not change the scripts.
 */
export class ScriptedEchoChatProvider extends BaseChatProvider {
  readonly name = 'scripted_echo';
  readonly modelName = 'scripted_echo';
  private readonly queue: EchoScriptStep[];
  private turns = 0;
  private readonly log = new RequestLog();

  constructor(
    scripts: Iterable<string>,
    private readonly options: ScriptedEchoChatProviderOptions = {},
    thinkingEffort?: ThinkingEffort,
  ) {
    super({ thinkingEffort });
    this.queue = [...scripts].flatMap((script) => splitEchoSteps(script));
  }

  /** How many scripts are left. */
  get remaining(): number {
    return this.queue.length;
  }

  /** How many scripts have been taken so far (the number of the last turn). */
  get turn(): number {
    return this.turns;
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
    const step = this.queue.shift();
    if (step === undefined) throw new ChatProviderError(`ScriptedEchoChatProvider exhausted at turn ${this.turns + 1}.`);
    this.turns++;
    this.options.trace?.(`SCRIPTED_ECHO TURN ${this.turns}: ${JSON.stringify(step.script)}`);
    return streamEchoScript(step, 'ScriptedEchoChatProvider', this.options, options.signal);
  }

  /** What the recent `generate` calls asked for, oldest first (the last 1000). */
  get requests(): readonly RecordedRequest[] {
    return this.log.entries;
  }

  /**
   * Copies (`withThinking`, `withGeneration`) have their own copy of the remaining scripts (and the
   * turn count) and their own request log: the two providers consume their queues independently.
   */
  protected override copyWith(changes: ProviderChanges): this {
    return super.copyWith({ log: new RequestLog(), queue: [...this.queue], ...changes });
  }
}
