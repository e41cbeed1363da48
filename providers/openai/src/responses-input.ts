import { ChatProviderError, type ContentPart, type JsonValue, type Message, type ThinkPart } from '@kosong/core';

/** How kosong messages become the `input` items of a Responses request. */
export interface ResponsesInputConversion {
  /** The role of the system prompt and of `system` messages: `developer` for OpenAI models, else `system`. */
  readonly systemRole: 'system' | 'developer';
  /**
   * The `output` of a `function_call_output`: `parts` (default) sends a list of `input_text` /
   * `input_image` / `input_file` items; `text` sends the text parts joined with newlines.
   */
  readonly toolMessageContent: 'parts' | 'text';
}

/** One item of the `input` of a Responses request. */
export type ResponsesInputItem = { readonly [key: string]: JsonValue };

/**
 * The `input` of a Responses request (kosong spec §7.4): the system prompt first (when not empty),
 * as `{role, content}`, then the items of each message of the history:
 *
 * - a `tool` message is one `function_call_output` with its `call_id` and its content as a list of
 *   `input_text` (non-empty text), `input_image` and `input_file` (audio) items, or as text;
 * - any other message is walked in order: a run of think parts with the same `encrypted` (assistant
 *   messages only) is one `reasoning` item, its texts as `summary_text`s and `encrypted` as
 *   `encrypted_content` (`null` when absent), so encrypted reasoning goes back exactly as it came;
 *   the other parts between them are `message` items (`output_text` for the assistant, else
 *   `input_text`, `input_image` with `detail: "auto"`, `input_file`); a message item with no content
 *   left (only empty text) is not sent;
 * - then each tool call of an assistant message is a `function_call` (`"{}"` when it had no arguments).
 *
 * @throws {ChatProviderError} for a part the Responses API has no input for (video, audio other than
 * an http(s) URL or a base64 MP3/WAV `data:` URI, an unknown part type), or a `tool` message without
 * a `toolCallId`, naming the message and part. Nothing is sent then.
 */
export function convertInput(systemPrompt: string, history: readonly Message[], conversion: ResponsesInputConversion): ResponsesInputItem[] {
  const input: ResponsesInputItem[] = [];
  if (systemPrompt !== '') input.push({ role: conversion.systemRole, content: systemPrompt });
  for (let i = 0; i < history.length; i++) convertMessage(history[i]!, i, conversion, input);
  return input;
}

function convertMessage(message: Message, index: number, conversion: ResponsesInputConversion, input: ResponsesInputItem[]): void {
  if (message.role === 'tool') {
    input.push(functionCallOutput(message, index, conversion));
    return;
  }
  const role = message.role === 'system' ? conversion.systemRole : message.role;
  const isAssistant = message.role === 'assistant';
  let run: ContentPart[] = [];
  let runStart = 0;
  const content = message.content;
  for (let i = 0; i < content.length; ) {
    const part = content[i]!;
    if (part.type !== 'think') {
      if (run.length === 0) runStart = i;
      run.push(part);
      i++;
      continue;
    }
    // think parts of other roles have no Responses item (and are no reasoning of the model's)
    const thoughts: ThinkPart[] = [];
    while (i < content.length && content[i]!.type === 'think' && (content[i] as ThinkPart).encrypted === part.encrypted) thoughts.push(content[i++] as ThinkPart);
    if (!isAssistant) continue;
    flushMessage(role, run, index, runStart, input);
    run = [];
    input.push({
      summary: thoughts.map((thought) => ({ type: 'summary_text', text: thought.think })),
      type: 'reasoning',
      encrypted_content: part.encrypted ?? null,
    });
  }
  flushMessage(role, run, index, runStart, input);
  if (!isAssistant) return;
  for (const call of message.toolCalls ?? []) {
    input.push({ arguments: call.function.arguments ?? '{}', call_id: call.id, name: call.function.name, type: 'function_call' });
  }
}

/** Adds the `message` item of a run of non-think parts, unless it has no content. */
function flushMessage(role: string, run: readonly ContentPart[], index: number, start: number, input: ResponsesInputItem[]): void {
  if (run.length === 0) return;
  const content: JsonValue[] = [];
  for (let i = 0; i < run.length; i++) {
    const part = run[i]!;
    if (role === 'assistant') {
      // the API has output_text only; media of the model's own past messages have no item
      if (part.type === 'text' && part.text !== '') content.push({ type: 'output_text', text: part.text, annotations: [] });
      continue;
    }
    const item = inputContent(part, true, () => `message ${index}, part ${start + i}`);
    if (item !== undefined) content.push(item);
  }
  if (content.length > 0) input.push({ content, role, type: 'message' });
}

function functionCallOutput(message: Message, index: number, conversion: ResponsesInputConversion): ResponsesInputItem {
  if (message.toolCallId === undefined || message.toolCallId === '') {
    throw new ChatProviderError(`Cannot send message ${index}: a tool message needs the toolCallId of the call it answers`);
  }
  let output: JsonValue;
  if (conversion.toolMessageContent === 'text') {
    output = message.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('\n');
  } else {
    const items: JsonValue[] = [];
    message.content.forEach((part, partIndex) => {
      const item = part.type === 'think' ? undefined : inputContent(part, false, () => `message ${index}, part ${partIndex}`);
      if (item !== undefined) items.push(item);
    });
    // an empty list says nothing the empty string does not, and the string is always accepted
    output = items.length === 0 ? '' : items;
  }
  return { call_id: message.toolCallId, output, type: 'function_call_output' };
}

/**
 * The input content item of a part: `input_text` (`undefined` for empty text), `input_image`
 * (with `detail: "auto"` in messages, without in tool outputs, as the Python original sends), or
 * `input_file` for audio.
 */
function inputContent(part: ContentPart, inMessage: boolean, where: () => string): JsonValue | undefined {
  switch (part.type) {
    case 'text':
      return part.text === '' ? undefined : { type: 'input_text', text: part.text };
    case 'think':
      return undefined;
    case 'image_url':
      return inMessage ? { type: 'input_image', detail: 'auto', image_url: part.imageUrl.url } : { type: 'input_image', image_url: part.imageUrl.url };
    case 'audio_url':
      return audioFile(part.audioUrl.url, inMessage, where);
    case 'video_url':
      throw new ChatProviderError(`Cannot send the video of ${where()}: the Responses API has no video input`);
    default:
      throw new ChatProviderError(`Cannot send ${where()}: unknown content part type ${JSON.stringify((part as { type?: unknown }).type)}`);
  }
}

const AUDIO_DATA_URI = /^data:audio\/([a-z0-9.+-]+);base64,/i;
const AUDIO_FILE_NAMES: Readonly<Record<string, string>> = { mp3: 'inline.mp3', mpeg: 'inline.mp3', wav: 'inline.wav' };

/**
 * Audio as an `input_file`: an http(s) URL as `file_url`; a base64 `data:` URI of MP3 or WAV as
 * `file_data` (the base64 only) with a file name in messages (kosong spec §7.4).
 */
function audioFile(url: string, inMessage: boolean, where: () => string): JsonValue {
  if (/^https?:\/\//i.test(url)) return { type: 'input_file', file_url: url };
  const match = AUDIO_DATA_URI.exec(url);
  const filename = match === null ? undefined : AUDIO_FILE_NAMES[match[1]!.toLowerCase()];
  if (match === null || filename === undefined) {
    throw new ChatProviderError(
      `Cannot send the audio of ${where()}: the Responses API takes audio as an http(s) URL or a base64 data: URI of MP3 or WAV (got ${describeURL(url)})`,
    );
  }
  const data = url.slice(match[0].length);
  return inMessage ? { type: 'input_file', file_data: data, filename } : { type: 'input_file', file_data: data };
}

function describeURL(url: string): string {
  if (url.startsWith('data:')) return `a ${url.slice(0, url.search(/[;,]/) + 1 || 30)}… URI`;
  return url.length > 80 ? `${url.slice(0, 80)}…` : url;
}
