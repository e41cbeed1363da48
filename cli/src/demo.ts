import {
  definePlugin,
  type ChatProvider,
  type GenerationOptions,
  type Message,
  type Plugin,
  type StreamedMessage,
  type ThinkingEffort,
  type Tool,
} from '@kosong/core';
import type { ProviderGenerateOptions } from '@kosong/core/provider-kit';
import { ScriptedEchoChatProvider } from '@kosong/provider-echo';

/** The start of what the demo says to every message after its tour. */
export const DEMO_NOTICE = "This is kosong's offline demo: a scripted model, which cannot read what you write.";

/** Splits text into streamed `text:` (or `think:`) lines of a few words (`wordsPerPart`), as a model would stream it. */
function streamed(kind: 'text' | 'think', text: string, wordsPerPart = 2): string {
  const words = text.match(/\S+\s*/g) ?? [];
  const chunks: string[] = [];
  for (let i = 0; i < words.length; i += wordsPerPart) chunks.push(words.slice(i, i + wordsPerPart).join(''));
  return chunks.map((chunk) => `${kind}: ${JSON.stringify(chunk)}`).join('\n');
}

const call = (id: string, name: string, args: object): string =>
  `tool_call: ${JSON.stringify({ id, name, arguments: JSON.stringify(args) })}`;

/**
 * The scripted demo model: in three steps it looks around the working directory with the built-in
 * tools (two calls at once, one of them refused for leaving the directory), computes something, and
 * sums up. Its text cannot depend on what the tools return: it is a script.
 */
export function demoScripts(): string[] {
  return [
    [
      'id: demo-1',
      'usage: {"input_other": 412, "output": 58}',
      streamed('think', 'The user wants a tour. I will list the directory and read package.json at the same time.'),
      streamed('text', "Let me look around this directory. I'll list it and read package.json at the same time. "),
      call('call_list', 'list_directory', { path: '.' }),
      streamed('text', 'While those run, '),
      call('call_read', 'read_file', { path: 'package.json' }),
      streamed('text', "I'll also try a file outside the working directory, which the tools must refuse."),
      call('call_escape', 'read_file', { path: '../../etc/passwd' }),
      'finish: tool_calls',
    ].join('\n'),
    [
      'id: demo-2',
      'usage: {"input_other": 980, "input_cache_read": 412, "output": 41}',
      streamed('think', 'Now a quick computation with the calculator tool.'),
      streamed('text', 'The refusal is what should happen. Now a small computation: how many tokens fit in 32 pages of 500 words at 1.3 tokens a word?'),
      call('call_calc', 'calculate', { expression: '32 * 500 * 1.3' }),
      'finish: tool_calls',
    ].join('\n'),
    [
      'id: demo-3',
      'usage: {"input_other": 120, "input_cache_read": 1392, "output": 64}',
      streamed(
        'text',
        'Done. I listed the directory and read package.json in parallel while I was still writing, ' +
          'the attempt to leave the working directory came back as an error result, and the calculator ' +
          'answered the question. Every result came back to me in the order I asked for them.',
      ),
      'finish: stop',
    ].join('\n'),
  ];
}

/** What the demo says to a message after its tour: what it is, and how to talk to a real model. */
function noticeScript(): string {
  return [
    'id: demo-notice',
    'usage: {"input_other": 96, "input_cache_read": 1500, "output": 88}',
    streamed(
      'text',
      `${DEMO_NOTICE} It can only play its tour of this directory (ask for "the tour" to see it again). ` +
        'To talk to a real model, choose a provider: `kosong providers` lists them, e.g. `OPENAI_API_KEY=… kosong --provider openai`; ' +
        '`kosong --provider echo` plays the echo scripts you type.',
      8,
    ),
    'finish: stop',
  ].join('\n');
}

/** The text of a message (its text parts). */
function textOf(message: Message): string {
  return message.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
}

/**
 * What the demo model answers, from the conversation alone (so it is the same in a chat, on a session
 * file resumed later, after Ctrl-C, and on any `kosong worker`): the first message of a conversation,
 * and any that asks for the tour, get the tour, its steps one after the other; every other message
 * gets one answer saying that this is a scripted demo and how to choose a real provider.
 */
export function demoScriptFor(history: readonly Message[]): string {
  const userIndex = history.findLastIndex((message) => message.role === 'user');
  const earlier = history.slice(0, Math.max(userIndex, 0));
  const asked = userIndex < 0 ? '' : textOf(history[userIndex]!);
  const tourTurn = !earlier.some((message) => message.role === 'assistant') || /\btour\b|show me around/i.test(asked);
  const step = history.slice(userIndex + 1).filter((message) => message.role === 'assistant').length;
  const tour = demoScripts();
  return tourTurn && step < tour.length ? tour[step]! : noticeScript();
}

/** The demo model: a scripted echo model whose script is chosen by {@link demoScriptFor} on every request. */
export class DemoChatProvider implements ChatProvider {
  /** Holds what was configured (generation options, thinking); each request plays its script on a copy. */
  readonly #configured: ScriptedEchoChatProvider;

  constructor(configured: ScriptedEchoChatProvider = new ScriptedEchoChatProvider([], DEMO_STREAM)) {
    this.#configured = configured;
  }

  get name(): string {
    return this.#configured.name;
  }

  get modelName(): string {
    return this.#configured.modelName;
  }

  get thinkingEffort(): ThinkingEffort | undefined {
    return this.#configured.thinkingEffort;
  }

  get generation(): GenerationOptions {
    return this.#configured.generation;
  }

  generate(systemPrompt: string, tools: readonly Tool[], history: readonly Message[], options?: ProviderGenerateOptions): Promise<StreamedMessage> {
    const player = new ScriptedEchoChatProvider([demoScriptFor(history)], DEMO_STREAM, this.#configured.thinkingEffort).withGeneration(this.#configured.generation);
    return player.generate(systemPrompt, tools, history, options);
  }

  withThinking(effort: ThinkingEffort): DemoChatProvider {
    return new DemoChatProvider(this.#configured.withThinking(effort));
  }

  withGeneration(options: GenerationOptions): DemoChatProvider {
    return new DemoChatProvider(this.#configured.withGeneration(options));
  }
}

/** How the demo streams: a pause before each part, as a model streams. */
const DEMO_STREAM = { delayMs: 15 } as const;

/** The `demo` provider (see {@link DemoChatProvider}). */
export function demoPlugin(): Plugin {
  return definePlugin({
    name: 'provider:demo',
    setup: (ctx) => ctx.bindChatProvider('demo', () => new DemoChatProvider(), { default: true }),
  });
}
