import type { JsonValue, Message } from '@kosong/core';

/** A part of a saved chat's message, as the AI SDK's `UIMessage` parts are (`ai` 6). */
export type SavedChatPart =
  | { readonly type: 'step-start' }
  | { readonly type: 'text'; readonly text: string; readonly state: 'done' }
  | { readonly type: 'reasoning'; readonly text: string; readonly state: 'done' }
  | {
      readonly type: 'dynamic-tool';
      readonly toolName: string;
      readonly toolCallId: string;
      readonly state: 'input-available' | 'output-available';
      readonly input: unknown;
      readonly output?: JsonValue;
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
 */
export function savedChatMessages(chatId: string, history: readonly Message[]): SavedChatMessage[] {
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
  return messages;
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
