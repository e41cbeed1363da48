import { ChatProviderError, toolCall, toolCallPart, type ContentPart, type StreamedMessagePart } from '@kosong/core';

import { JsonValueScanner } from './json-value-scanner.js';

/** One streamed fragment of one tool call, as a Chat Completions delta carries it. */
export interface ToolCallDelta {
  /** The `index` that tells parallel calls apart; some servers leave it out. */
  readonly index: number | undefined;
  readonly id: string | undefined;
  readonly name: string | undefined;
  readonly arguments: string | undefined;
}

interface CallState {
  readonly index: number | undefined;
  id: string | undefined;
  name: string | undefined;
  /** Arguments received before the call was started; `null` if none came. */
  args: string | null;
  readonly scanner: JsonValueScanner;
  status: 'waiting' | 'active' | 'done';
}

/**
 * Orders content parts and tool-call deltas into the part sequence kosong's merging expects: each
 * tool call is one {@link ToolCall} followed only by the {@link ToolCallPart}s of its own arguments.
 *
 * Chat Completions servers tell parallel calls apart by `index`, and may interleave their deltas.
 * One call streams at a time (the *active* one, started by its first delta that has a name). Deltas
 * of other calls, and content, wait until the active call's arguments are a complete JSON object or
 * array, or until the stream ends; then they are released in arrival order, each waiting call as one
 * `ToolCall` with the arguments gathered so far. In the usual case (calls one after another) nothing
 * waits and everything streams as it arrives.
 *
 * A delta with a new `id` at an index already used starts a new call (some servers send index 0
 * for every call). A call without an id gets a generated one.
 */
export class StreamAssembler {
  readonly #calls = new Map<number | string, CallState>();
  /** Content parts and not-yet-started calls, in arrival order. */
  readonly #backlog: (ContentPart | CallState)[] = [];
  #active: CallState | undefined;
  #lastKey: number | string | undefined;

  constructor(private readonly generateId: () => string) {}

  /** Adds a content part (text or think); writes what can be released to `out`. */
  content(part: ContentPart, out: StreamedMessagePart[]): void {
    if (this.#backlog.length === 0 && (this.#active === undefined || this.#active.scanner.complete)) {
      this.#closeActive();
      out.push(part);
      return;
    }
    this.#backlog.push(part);
    this.#drain(out);
  }

  /**
   * Adds a tool-call delta; writes what can be released to `out`.
   *
   * @throws {ChatProviderError} if arguments arrive for a call that was already complete.
   */
  toolCall(delta: ToolCallDelta, out: StreamedMessagePart[]): void {
    const key = this.#keyOf(delta);
    this.#lastKey = key;
    let call = this.#calls.get(key);
    // A new id at a used index is a new call: Ollama and some gateways send index 0 for every call.
    if (call !== undefined && delta.id && call.id !== undefined && delta.id !== call.id) call = undefined;
    const isNew = call === undefined;
    if (call === undefined) {
      call = { index: delta.index, id: undefined, name: undefined, args: null, scanner: new JsonValueScanner(), status: 'waiting' };
      this.#calls.set(key, call);
    }
    if (call.id === undefined && delta.id) call.id = delta.id;
    if (call.name === undefined && delta.name) call.name = delta.name;
    const fragment = delta.arguments;
    switch (call.status) {
      case 'active':
        if (fragment) {
          call.scanner.feed(fragment);
          out.push(toolCallPart(fragment));
        }
        break;
      case 'waiting':
        if (typeof fragment === 'string') {
          call.scanner.feed(fragment);
          call.args = (call.args ?? '') + fragment;
        }
        if (isNew) this.#backlog.push(call);
        break;
      case 'done':
        if (fragment && fragment.trim() !== '') {
          throw new ChatProviderError(
            `The server sent more arguments for tool call ${describe(call)} after they were complete (or after other output followed them)`,
          );
        }
        break;
    }
    this.#drain(out);
  }

  /**
   * The stream ended: releases everything still waiting to `out`.
   *
   * @throws {ChatProviderError} if a tool call never got a name.
   */
  finish(out: StreamedMessagePart[]): void {
    this.#closeActive();
    for (const item of this.#backlog.splice(0)) {
      if (!isCall(item)) {
        out.push(item);
        continue;
      }
      if (item.name === undefined) throw new ChatProviderError(`The server sent tool call ${describe(item)} without a function name`);
      this.#start(item, out);
      this.#closeActive();
    }
  }

  #drain(out: StreamedMessagePart[]): void {
    while (this.#backlog.length > 0 && (this.#active === undefined || this.#active.scanner.complete)) {
      const head = this.#backlog[0]!;
      if (isCall(head) && head.name === undefined) return; // it cannot start before its name is known
      this.#backlog.shift();
      this.#closeActive();
      if (isCall(head)) this.#start(head, out);
      else out.push(head);
    }
  }

  #start(call: CallState, out: StreamedMessagePart[]): void {
    call.status = 'active';
    out.push(toolCall(call.id ?? this.generateId(), call.name!, call.args));
    call.args = null;
    this.#active = call;
  }

  #closeActive(): void {
    if (this.#active === undefined) return;
    this.#active.status = 'done';
    this.#active = undefined;
  }

  #keyOf(delta: ToolCallDelta): number | string {
    if (typeof delta.index === 'number') return delta.index;
    if (delta.id) return `id:${delta.id}`;
    if (delta.name || this.#lastKey === undefined) return `call:${this.#calls.size}`;
    return this.#lastKey;
  }
}

function isCall(item: ContentPart | CallState): item is CallState {
  return 'scanner' in item;
}

function describe(call: CallState): string {
  const index = call.index === undefined ? '' : `#${call.index}`;
  const name = call.name === undefined ? '' : ` (${call.name})`;
  return `${index}${name}` || 'without index';
}
