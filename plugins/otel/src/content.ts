/**
 * Content capture: kosong messages, tool arguments and tool outputs as the JSON the GenAI conventions
 * define (`gen_ai.input.messages`, `gen_ai.output.messages`, `gen_ai.tool.call.*`), size-capped.
 *
 * The cap counts the characters of the content strings (texts, reasoning, arguments, outputs, media
 * URLs) of one attribute. A string that does not fit is cut and ends with {@link TRUNCATION_MARKER};
 * the strings after it become empty (still marked). The JSON structure is always kept, so a capped
 * attribute still parses. For the input messages the newest messages get the budget first.
 *
 * @module
 */
import type { ContentPart, FinishReason, Message, Tool, ToolCall, ToolReturnValue } from '@kosong/core';
import { genAiFinishReason } from './conventions.js';

/** Ends every string the cap cut short. */
export const TRUNCATION_MARKER = '…[truncated]';

/** A GenAI message part (input/output messages schema). */
type GenAiPart = { readonly type: string; readonly [field: string]: unknown };

interface GenAiMessage {
  readonly role: string;
  readonly parts: readonly GenAiPart[];
  readonly name?: string;
  readonly finish_reason?: string;
}

/** What is left of the character budget of one attribute. */
class ContentBudget {
  constructor(private remaining: number) {}

  /** `text`, or its head and the truncation marker if it does not fit in what is left. */
  take(text: string): string {
    if (text.length <= this.remaining) {
      this.remaining -= text.length;
      return text;
    }
    const kept = text.slice(0, this.remaining);
    this.remaining = 0;
    return kept + TRUNCATION_MARKER;
  }

  /** Whether `text` fits in what is left (without taking it). */
  fits(text: string): boolean {
    return text.length <= this.remaining;
  }
}

/** `gen_ai.input.messages`: the history sent to the model, in order, newest messages capped last. */
export function inputMessagesJson(history: readonly Message[], maxLength: number): string {
  const budget = new ContentBudget(maxLength);
  const messages: GenAiMessage[] = new Array<GenAiMessage>(history.length);
  for (let i = history.length - 1; i >= 0; i--) messages[i] = chatMessage(history[i]!, budget);
  return JSON.stringify(messages);
}

/** `gen_ai.output.messages`: the model's one message, with its finish reason. */
export function outputMessagesJson(message: Message, finishReason: FinishReason | undefined, maxLength: number): string {
  const budget = new ContentBudget(maxLength);
  const output: GenAiMessage = { ...chatMessage(message, budget), finish_reason: genAiFinishReason(finishReason ?? 'other') };
  return JSON.stringify([output]);
}

/** `gen_ai.tool.call.arguments`: the model's JSON text of the arguments, capped (`undefined` if it sent none). */
export function toolArgumentsText(call: ToolCall, maxLength: number): string | undefined {
  const args = call.function.arguments;
  return args === null ? undefined : new ContentBudget(maxLength).take(args);
}

/** `gen_ai.tool.call.result`: a string output as is, content parts as a JSON array of GenAI parts; capped. */
export function toolOutputText(value: ToolReturnValue, maxLength: number): string {
  const budget = new ContentBudget(maxLength);
  return typeof value.output === 'string' ? budget.take(value.output) : JSON.stringify(value.output.map((part) => contentPart(part, budget)));
}

/** `gen_ai.system_instructions`: the system prompt as one text part, capped. */
export function systemInstructionsJson(systemPrompt: string, maxLength: number): string {
  return JSON.stringify([{ type: 'text', content: new ContentBudget(maxLength).take(systemPrompt) }]);
}

/**
 * `gen_ai.tool.definitions`: the tools as `{type: 'function', name, description, parameters}`. The
 * cap counts descriptions and the parameters' JSON: a description is cut like any content, and a
 * tool whose parameters no longer fit goes without them.
 */
export function toolDefinitionsJson(tools: readonly Tool[], maxLength: number): string {
  const budget = new ContentBudget(maxLength);
  return JSON.stringify(
    tools.map((tool) => {
      const definition: Record<string, unknown> = { type: 'function', name: tool.name, description: budget.take(tool.description) };
      const parameters = safeJson(tool.parameters);
      if (parameters !== undefined && budget.fits(parameters)) {
        budget.take(parameters);
        definition['parameters'] = tool.parameters;
      }
      return definition;
    }),
  );
}

function safeJson(value: unknown): string | undefined {
  try {
    return JSON.stringify(value);
  } catch {
    return undefined;
  }
}

/** A capped text (e.g. a tool error's message). */
export function cappedText(text: string, maxLength: number): string {
  return new ContentBudget(maxLength).take(text);
}

function chatMessage(message: Message, budget: ContentBudget): GenAiMessage {
  const parts: GenAiPart[] = [];
  if (message.role === 'tool') {
    parts.push({ type: 'tool_call_response', id: message.toolCallId ?? null, response: toolResponse(message.content, budget) });
  } else {
    for (const part of message.content) parts.push(contentPart(part, budget));
  }
  for (const call of message.toolCalls ?? []) parts.push(toolCallPart(call, budget));
  return message.name === undefined ? { role: message.role, parts } : { role: message.role, parts, name: message.name };
}

/** A tool message's content: its text when it is all text, else the parts. */
function toolResponse(content: readonly ContentPart[], budget: ContentBudget): unknown {
  if (content.every((part) => part.type === 'text')) return budget.take(content.map((part) => part.text).join(''));
  return content.map((part) => contentPart(part, budget));
}

function toolCallPart(call: ToolCall, budget: ContentBudget): GenAiPart {
  const args = call.function.arguments;
  return { type: 'tool_call', id: call.id, name: call.function.name, arguments: args === null ? null : toolArguments(args, budget) };
}

/** Arguments as the object they encode when they fit (the conventions prefer objects), else the capped text. */
function toolArguments(args: string, budget: ContentBudget): unknown {
  if (budget.fits(args)) {
    try {
      const parsed: unknown = JSON.parse(args);
      budget.take(args);
      return parsed;
    } catch {
      // not JSON: recorded as the text the model sent
    }
  }
  return budget.take(args);
}

function contentPart(part: ContentPart, budget: ContentBudget): GenAiPart {
  switch (part.type) {
    case 'text':
      return { type: 'text', content: budget.take(part.text) };
    case 'think':
      return { type: 'reasoning', content: budget.take(part.think) };
    case 'image_url':
      return mediaPart('image', part.imageUrl.url, budget);
    case 'audio_url':
      return mediaPart('audio', part.audioUrl.url, budget);
    case 'video_url':
      return mediaPart('video', part.videoUrl.url, budget);
    default:
      return { type: (part as { type: string }).type };
  }
}

const DATA_URI = /^data:([^;,]*)((?:;[^;,]*)*),/;

/** A `data:` URI becomes a blob part (its payload as content), any other URL a uri part. */
function mediaPart(modality: 'image' | 'audio' | 'video', url: string, budget: ContentBudget): GenAiPart {
  const data = DATA_URI.exec(url);
  if (!data) return { type: 'uri', modality, uri: budget.take(url) };
  const mimeType = data[1] === '' ? null : data[1];
  return { type: 'blob', modality, mime_type: mimeType, content: budget.take(url.slice(data[0].length)) };
}
