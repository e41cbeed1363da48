import { textPart, type ContentPart, type ToolReturnValue } from '@kosong/core';

/**
 * Caps the text a tool gives the model at `maxChars` characters (UTF-16 code units, never splitting
 * a surrogate pair), in order across the output: a string output is cut; in a list of parts, the
 * text part that crosses the limit is cut and later text parts are dropped, while media parts (images,
 * audio, video) are kept. A note is then appended (to the string, or as a last text part) telling the
 * model how much there was and that it only sees the beginning. The note is not counted in the cap;
 * `message` and `display` are left as they are. Returns `value` itself when nothing is cut.
 */
export function truncateOutput(value: ToolReturnValue, maxChars: number): ToolReturnValue {
  if (!(maxChars < Infinity)) return value;
  const { output } = value;
  if (typeof output === 'string') {
    if (output.length <= maxChars) return value;
    return { ...value, output: `${cut(output, maxChars)}\n\n${truncationNote(output.length, maxChars)}` };
  }
  let budget = maxChars;
  let total = 0;
  let truncated = false;
  const parts: ContentPart[] = [];
  for (const part of output) {
    if (!isTextPart(part)) {
      parts.push(part);
      continue;
    }
    total += part.text.length;
    if (part.text.length <= budget) {
      parts.push(part);
      budget -= part.text.length;
    } else {
      truncated = true;
      if (budget > 0) parts.push({ ...part, text: cut(part.text, budget) });
      budget = 0;
    }
  }
  if (!truncated) return value;
  parts.push(textPart(truncationNote(total, maxChars)));
  return { ...value, output: parts };
}

/** What the model is told when its output was cut. */
export function truncationNote(totalChars: number, maxChars: number): string {
  return `[Output truncated: the tool returned ${totalChars} characters of text, more than the limit of ${maxChars}; only the first ${maxChars} are shown. Ask for less (a narrower query, a range, a page) to see the rest.]`;
}

function cut(text: string, maxChars: number): string {
  const code = text.charCodeAt(maxChars - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? maxChars - 1 : maxChars);
}

/** Defensive: a tool's own return value is only checked shallowly, so a part may be anything. */
function isTextPart(part: unknown): part is ContentPart & { type: 'text' } {
  return typeof part === 'object' && part !== null && (part as ContentPart).type === 'text' && typeof (part as { text?: unknown }).text === 'string';
}
