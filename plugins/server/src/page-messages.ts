import type { JsonValue, Message, PendingStep, ToolResult } from '@kosong/core';

import { approvalIdOf } from './approval-id.js';

/** A part of a saved chat's message, as the AI SDK's `UIMessage` parts are (`ai` 6). */
export type SavedChatPart =
  | { readonly type: 'step-start' }
  | { readonly type: 'text'; readonly text: string; readonly state: 'done' }
  | { readonly type: 'reasoning'; readonly text: string; readonly state: 'done' }
  | {
      readonly type: 'dynamic-tool';
      readonly toolName: string;
      readonly toolCallId: string;
      readonly state: 'input-available' | 'output-available' | 'output-error' | 'approval-requested';
      readonly input: unknown;
      readonly output?: JsonValue;
      readonly errorText?: string;
      /** On a call that waits for approval: the id `addToolApprovalResponse` answers. */
      readonly approval?: { readonly id: string };
    };

/** A message of a saved chat, as the AI SDK's `UIMessage` (what `useChat` shows). */
export interface SavedChatMessage {
  readonly id: string;
  readonly role: 'user' | 'assistant';
  readonly parts: readonly SavedChatPart[];
}

/**
 * A chat's stored history as the messages `useChat` shows: a user message per user message (its
 * text), and one assistant message per turn, whose steps (the assistant messages between two user
 * messages) begin with a `step-start` part and hold their reasoning, text and tool calls (as
 * `dynamic-tool` parts: the tools are the server's), each with the output of its tool message.
 * System messages are left out, and so are media parts (images, audio, video).
 *
 * A step that waits for approval (`pendingStep`, not in the history yet) ends the last turn: its
 * calls that wait are `approval-requested` parts with their approval id (that of the
 * `tool-approval-request` chunk), those that settled have their result.
 */
export function savedChatMessages(chatId: string, history: readonly Message[], pendingStep?: PendingStep): SavedChatMessage[] {
  const messages: { id: string; role: 'user' | 'assistant'; parts: SavedChatPart[] }[] = [];
  history.forEach((message, index) => {
    const id = `${chatId}-${index}`;
    if (message.role === 'user') {
      messages.push({ id, role: 'user', parts: textParts(message) });
      return;
    }
    if (message.role === 'assistant') {
      let turn = messages.at(-1);
      if (turn?.role !== 'assistant') {
        turn = { id, role: 'assistant', parts: [] };
        messages.push(turn);
      }
      turn.parts.push({ type: 'step-start' }, ...contentParts(message));
      for (const call of message.toolCalls ?? []) {
        turn.parts.push({ type: 'dynamic-tool', toolName: call.function.name, toolCallId: call.id, state: 'input-available', input: parseArguments(call.function.arguments) });
      }
      return;
    }
    if (message.role === 'tool' && message.toolCallId !== undefined) {
      const turn = messages.at(-1);
      if (turn?.role !== 'assistant') return;
      const at = turn.parts.findLastIndex((part) => part.type === 'dynamic-tool' && part.toolCallId === message.toolCallId);
      const call = turn.parts[at];
      if (call?.type !== 'dynamic-tool') return;
      turn.parts[at] = { ...call, state: 'output-available', output: textOf(message) };
    }
  });
  if (pendingStep !== undefined) {
    let turn = messages.at(-1);
    if (turn?.role !== 'assistant') {
      turn = { id: `${chatId}-pending`, role: 'assistant', parts: [] };
      messages.push(turn);
    }
    turn.parts.push({ type: 'step-start' }, ...contentParts(pendingStep.message));
    (pendingStep.message.toolCalls ?? []).forEach((call, index) => {
      const base = { type: 'dynamic-tool', toolName: call.function.name, toolCallId: call.id, input: parseArguments(call.function.arguments) } as const;
      const result = pendingStep.results[index];
      if (result === undefined) turn.parts.push({ ...base, state: 'approval-requested', approval: { id: approvalIdOf({ toolCall: call, index, stepId: pendingStep.stepId }) } });
      else turn.parts.push({ ...base, ...settledPart(result) });
    });
  }
  return messages;
}

/** The state and result of a call that settled in a pending step. */
function settledPart(result: ToolResult): { state: 'output-available'; output: JsonValue } | { state: 'output-error'; errorText: string } {
  const value = result.returnValue;
  const output = typeof value.output === 'string' ? value.output : JSON.stringify(value.output);
  if (value.isError) return { state: 'output-error', errorText: [value.message, output].filter((text) => text !== '').join('\n') };
  return { state: 'output-available', output };
}

function textParts(message: Message): SavedChatPart[] {
  return message.content.flatMap((part) => (part.type === 'text' ? [{ type: 'text', text: part.text, state: 'done' } as const] : []));
}

function contentParts(message: Message): SavedChatPart[] {
  return message.content.flatMap((part): SavedChatPart[] => {
    if (part.type === 'text') return [{ type: 'text', text: part.text, state: 'done' }];
    if (part.type === 'think') return part.think === '' ? [] : [{ type: 'reasoning', text: part.think, state: 'done' }];
    return [];
  });
}

function textOf(message: Message): string {
  return message.content.map((part) => (part.type === 'text' ? part.text : part.type === 'think' ? '' : `[${part.type}]`)).join('');
}

function parseArguments(args: string | null): unknown {
  if (args === null || args.trim() === '') return {};
  try {
    return JSON.parse(args) as unknown;
  } catch {
    return args;
  }
}
