/**
 * Compaction: when a conversation's history nears the model's context window, its older turns are
 * summarised into one message, so that a long session never overflows the window.
 *
 * @module
 */
import { errorMarker, hasErrorMarker, markError } from '../error-marker.js';
import { estimateRequestTokens } from '../governance/token-estimate.js';
import type { Message } from '../message/message.js';
import { checkKnownOptions } from '../known-options.js';
import type { ChatProvider } from '../provider/chat-provider.js';

/**
 * Writes the summary of the messages a compaction replaces (the summary of an earlier compaction
 * among them, when there was one): its text, which becomes the first message of the history.
 */
export type Summarizer = (messages: readonly Message[], options: { readonly signal?: AbortSignal }) => Promise<string>;

/** When and how an {@link Agent} compacts its history (`AgentOptions.compaction`). */
export interface CompactionOptions {
  /** The model's context window, in tokens (the history, the system prompt and the tools must fit in it). */
  readonly windowTokens: number;
  /** Compaction starts when the history's tokens reach this fraction of the window (default 0.8; between 0 and 1). */
  readonly threshold?: number;
  /**
   * How many of the last messages are always kept as they are (default 6). The cut goes back from
   * there to the start of a turn (a user message) when there is one, else to the nearest message
   * that is not a tool result: a tool call and its result are never split.
   */
  readonly keepRecent?: number;
  /** Writes the summary (e.g. {@link providerSummarizer} with the agent's model). */
  readonly summarizer: Summarizer;
}

/** What one compaction did. */
export interface Compaction {
  /** How many messages at the start of the history the summary replaced. */
  readonly replaced: number;
  /** The history's tokens before (reported by the provider, or estimated) and after (estimated). */
  readonly tokensBefore: number;
  readonly tokensAfter: number;
  /** The summary message now first in the history. */
  readonly summary: Message;
}

/**
 * What a context records of a compaction (`AgentContext.compact`): the first `replaces` messages
 * of the history give way to `summary`, atomically, and the store keeps what they were.
 */
export interface CompactionRecord {
  readonly replaces: number;
  readonly summary: Message;
}

const COMPACTION_ERROR = errorMarker('CompactionError');

/**
 * A compaction that could not be made: the summarizer failed (its error is the `cause`) or gave no
 * text. The history is unchanged, and the turn that needed it fails with this error.
 */
export class CompactionError extends Error {
  constructor(message: string, options?: { readonly cause?: unknown }) {
    super(message, options);
    this.name = 'CompactionError';
    markError(this, COMPACTION_ERROR);
  }

  /** Whether `error` is a {@link CompactionError}. */
  static isInstance(error: unknown): error is CompactionError {
    return hasErrorMarker(error, COMPACTION_ERROR);
  }
}

/** The first line of a summary message's text: how the model (and a reader of the session) knows it for one. */
export const SUMMARY_HEADER = 'Summary of the earlier conversation (older messages were compacted into it):';

const OPTION_NAMES: Readonly<Record<keyof CompactionOptions, true>> = { windowTokens: true, threshold: true, keepRecent: true, summarizer: true };

/**
 * Checks compaction options.
 * @throws TypeError for an option it does not know, or a bad value.
 */
export function checkCompactionOptions(owner: string, options: CompactionOptions): void {
  if (typeof options !== 'object' || options === null) throw new TypeError(`${owner}: compaction must be an object`);
  checkKnownOptions(`${owner} compaction`, options, OPTION_NAMES);
  const { windowTokens, threshold, keepRecent, summarizer } = options;
  if (!Number.isSafeInteger(windowTokens) || windowTokens <= 0) throw new TypeError(`${owner}: compaction.windowTokens must be a positive integer, got ${String(windowTokens)}`);
  if (threshold !== undefined && !(typeof threshold === 'number' && threshold > 0 && threshold <= 1)) {
    throw new TypeError(`${owner}: compaction.threshold must be a number above 0 and at most 1, got ${String(threshold)}`);
  }
  if (keepRecent !== undefined && !(Number.isSafeInteger(keepRecent) && keepRecent >= 0)) {
    throw new TypeError(`${owner}: compaction.keepRecent must be a non-negative integer, got ${String(keepRecent)}`);
  }
  if (typeof summarizer !== 'function') throw new TypeError(`${owner}: compaction.summarizer must be a function`);
}

/** The history's tokens as the agent knows them: the provider's last count and what came after it. */
export interface HistoryTokens {
  /** The tokens the provider counted for the request and answer of the last step (its input + output). */
  readonly reported: number;
  /** How many messages of the history that count covers (those after it are estimated). */
  readonly covers: number;
}

/**
 * The tokens of `history`: the provider's last count plus an estimate of the messages after it,
 * or (before the first count, or when the history changed under it) an estimate of it all — with
 * `estimateRequestTokens`' rule: characters / 4, a fixed count per media part.
 */
export function historyTokens(history: readonly Message[], systemPrompt: string, known: HistoryTokens | undefined): number {
  if (known === undefined || known.covers > history.length) return estimateRequestTokens(systemPrompt, [], history);
  return known.reported + estimateRequestTokens('', [], history.slice(known.covers));
}

/**
 * Where a compaction of `history` cuts (the messages before the index are replaced), or
 * `undefined` when nothing can be: at most `history.length - keepRecent`, back to the start of a
 * turn if there is one, else to a message that is not a tool result; never 0.
 */
export function compactionCut(history: readonly Message[], keepRecent: number): number | undefined {
  const last = history.length - keepRecent;
  for (let i = last; i >= 1; i--) if (history[i]?.role === 'user' && !isSummary(history[i]!)) return i;
  for (let i = last; i >= 1; i--) if (history[i] !== undefined && history[i]!.role !== 'tool') return i;
  return undefined;
}

/** The summary message of a summary's text. */
export function summaryMessage(text: string): Message {
  return { role: 'user', content: [{ type: 'text', text: `${SUMMARY_HEADER}\n\n${text}` }] };
}

/** Whether a message is a compaction's summary. */
export function isSummary(message: Message): boolean {
  const first = message.content[0];
  return message.role === 'user' && first?.type === 'text' && first.text.startsWith(SUMMARY_HEADER);
}

/** What the model is asked, by {@link providerSummarizer}. */
const SUMMARY_INSTRUCTIONS =
  'Summarise the conversation above for whoever continues it: the user\'s goals and constraints, decisions made, facts learned ' +
  '(file names, values, errors), tool calls made and what they returned, and what is still open. Be complete and concise; ' +
  'write only the summary.';

/**
 * A {@link Summarizer} that asks `provider` (no tools) for the summary, with the messages to
 * replace as the history and one instruction after them. Its text is the summary.
 *
 * @throws Error when the model answers with no text.
 */
export function providerSummarizer(provider: ChatProvider, options: { readonly systemPrompt?: string } = {}): Summarizer {
  checkKnownOptions('providerSummarizer', options, { systemPrompt: true });
  return async (messages, { signal }) => {
    const history: Message[] = [...messages, { role: 'user', content: [{ type: 'text', text: SUMMARY_INSTRUCTIONS }] }];
    const stream = await provider.generate(options.systemPrompt ?? 'You summarise conversations.', [], history, signal === undefined ? {} : { signal });
    let text = '';
    for await (const part of stream) if (part.type === 'text') text += part.text;
    if (text.trim() === '') throw new Error('providerSummarizer: the model answered with no summary text');
    return text;
  };
}
