import type { Message } from '../message/message.js';
import type { FinishReason } from '../provider/chat-provider.js';
import type { TokenUsage } from '../provider/token-usage.js';
import { checkParsedJson, stripPrototypeKeys } from '../schema/parsed-json.js';
import type { SchemaIssue } from '../schema/schema-issues.js';
import { StructuredOutputError, type StructuredOutputFailure } from './output-errors.js';
import type { OutputCheck, ResolvedOutput } from './resolve-output.js';

/** What the model answered, as far as parsing its output goes. */
export interface GeneratedOutput {
  readonly message: Message;
  readonly finishReason: FinishReason | undefined;
  readonly usage: TokenUsage | undefined;
}

/** A whole text in one Markdown code fence (some models and servers wrap JSON so, native feature or not). */
const FENCED = /^```(?:json)?[ \t]*\r?\n([\s\S]*?)\r?\n?```$/i;

/**
 * The structured output of a response: the text parts of its message (thinking left out), joined,
 * parsed as JSON (a whole text in one Markdown code fence is taken from inside it), unwrapped from
 * `{"value": …}` when the schema asked for that, checked and cleaned by the rule of every JSON a
 * model writes, whatever the schema ({@link checkParsedJson}: a number beyond the double range is
 * invalid; `__proto__` keys, and object-valued `constructor`, `prototype`, … keys, are removed), and
 * validated (a zod schema's transforms apply; what it returns is cleaned of such keys too).
 *
 * @throws {StructuredOutputError} when there is no text, it is cut off, not JSON, or does not match.
 */
export async function parseOutput(output: ResolvedOutput, generated: GeneratedOutput): Promise<unknown> {
  const text = outputText(generated.message);
  const fail = (failure: StructuredOutputFailure, issues: readonly SchemaIssue[], cause?: unknown): StructuredOutputError =>
    new StructuredOutputError({ failure, text, issues, response: generated.message, finishReason: generated.finishReason, usage: generated.usage, cause });
  const trimmed = text.trim();
  if (trimmed === '') throw fail('empty', [{ path: [], message: 'no text' }]);
  const json = FENCED.exec(trimmed)?.[1] ?? trimmed;
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch (error) {
    const cutOff = generated.finishReason === 'length' || generated.finishReason === 'content_filter';
    throw fail(cutOff ? 'truncated' : 'not_json', [{ path: [], message: error instanceof Error ? error.message : String(error) }], error);
  }
  if (output.wrapped) {
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed) || !Object.hasOwn(parsed, 'value')) {
      throw fail('invalid', [{ path: [], message: 'expected an object with the output under "value"' }]);
    }
    parsed = (parsed as { value: unknown }).value;
  }
  const clean = checkParsedJson(parsed);
  if (!clean.ok) throw fail('invalid', clean.issues);
  let check: OutputCheck;
  try {
    check = await output.validate(parsed);
  } catch (error) {
    // A transform or refinement that throws, or a stack overflow on deeply nested JSON.
    throw fail('invalid', [{ path: [], message: `validation failed: ${error instanceof Error ? error.message : String(error)}` }], error);
  }
  if (!check.ok) throw fail('invalid', check.issues);
  // A Standard Schema builds its own value, which may carry parts of the input it passed through.
  return check.value === parsed ? parsed : stripPrototypeKeys(check.value);
}

/** The text parts of a message, joined (thinking and media left out). */
export function outputText(message: Message): string {
  let text = '';
  for (const part of message.content) if (part.type === 'text') text += part.text;
  return text;
}
