import type { Message } from '../message/message.js';
import type { ContentPart, TextPart } from '../message/parts.js';
import type { ToolResult } from '../tooling/tool-result.js';

const system = (text: string): TextPart => ({ type: 'text', text: `<system>${text}</system>` });

/**
 * The `tool` message that gives a result back to the model, as kimi-cli builds it (spec §4.1):
 * an error starts with `<system>ERROR: …</system>`; a success with its message (if any) in
 * `<system>` tags; then the output. Empty output says so; output without any text is announced.
 */
export function toolResultToMessage(result: ToolResult): Message {
  const { returnValue } = result;
  const output: ContentPart[] = typeof returnValue.output === 'string' ? (returnValue.output ? [{ type: 'text', text: returnValue.output }] : []) : [...returnValue.output];
  let content: ContentPart[];
  if (returnValue.isError) {
    content = [system(`ERROR: ${returnValue.message}`), ...output];
  } else {
    content = returnValue.message ? [system(returnValue.message), ...output] : output;
    if (content.length === 0) content = [system('Tool output is empty.')];
    else if (!content.some((part) => part.type === 'text')) content = [system('Tool returned non-text content.'), ...content];
  }
  return { role: 'tool', content, toolCallId: result.toolCallId };
}
