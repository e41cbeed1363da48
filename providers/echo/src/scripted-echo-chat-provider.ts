import {
  ChatProviderError,
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
export class ScriptedEchoChatProvider implements ChatProvider {
  readonly name = 'scripted_echo';
  readonly modelName = 'scripted_echo';
  readonly thinkingEffort: ThinkingEffort | undefined;
  private readonly queue: EchoScriptStep[];
  private turns: number;
  private configured: GenerationOptions = noGenerationOptions();
  private readonly log = new RequestLog();

  constructor(
    scripts: Iterable<string>,
    private readonly options: ScriptedEchoChatProviderOptions = {},
    thinkingEffort?: ThinkingEffort,
  ) {
    this.queue = [...scripts].flatMap((script) => splitEchoSteps(script));
    this.thinkingEffort = thinkingEffort;
    this.turns = 0;
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
    const generation = resolveGenerationOptions(this.name, this.configured, options.generation, tools);
    this.log.record({ systemPrompt, tools, history, generation, thinkingEffort: this.thinkingEffort, output: options.output });
    const step = this.queue.shift();
    if (step === undefined) throw new ChatProviderError(`ScriptedEchoChatProvider exhausted at turn ${this.turns + 1}.`);
    this.turns++;
    this.options.trace?.(`SCRIPTED_ECHO TURN ${this.turns}: ${JSON.stringify(step.script)}`);
    return streamEchoScript(step, 'ScriptedEchoChatProvider', this.options, options.signal);
  }

  /**
   * A copy with the effort recorded and its own copy of the remaining scripts (and turn count):
   * the two providers consume their queues independently.
   */
  withThinking(effort: ThinkingEffort): ScriptedEchoChatProvider {
    return this.copy(effort, this.configured);
  }

  /** A copy with these generation options merged over its own, and its own copy of the remaining scripts. */
  withGeneration(options: GenerationOptions): ScriptedEchoChatProvider {
    return this.copy(this.thinkingEffort, updateGenerationOptions(this.configured, options, this.name));
  }

  /** The generation options set with {@link ScriptedEchoChatProvider.withGeneration}. */
  get generation(): GenerationOptions {
    return this.configured;
  }

  /** What the recent `generate` calls asked for, oldest first (the last 1000). */
  get requests(): readonly RecordedRequest[] {
    return this.log.entries;
  }

  private copy(effort: ThinkingEffort | undefined, generation: GenerationOptions): ScriptedEchoChatProvider {
    const copy = new ScriptedEchoChatProvider([], this.options, effort);
    copy.queue.push(...this.queue);
    copy.turns = this.turns;
    copy.configured = generation;
    return copy;
  }
}
