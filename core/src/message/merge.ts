import type { StreamedMessagePart } from './parts.js';

/**
 * Merges `next` into `pending`, the rules of a streamed message (kosong spec §1):
 *
 * - text + text → one text part;
 * - think + think → one think part, unless `pending` already carries a signature (`encrypted`),
 *   which closes it; a signature on `next` is taken over and closes the merged part;
 * - a tool call absorbs the tool-call parts that follow it (`null` fragments add nothing);
 * - a tool-call part absorbs following tool-call parts (an orphan run, dropped later by the message);
 * - nothing else merges (media parts never do).
 *
 * Pure: neither argument is modified; a merge returns a new part.
 *
 * @returns the merged part, or `undefined` when the two do not merge.
 */
export function mergePart(pending: StreamedMessagePart, next: StreamedMessagePart): StreamedMessagePart | undefined {
  switch (pending.type) {
    case 'text':
      return next.type === 'text' ? { type: 'text', text: pending.text + next.text } : undefined;
    case 'think':
      if (next.type !== 'think' || pending.encrypted) return undefined;
      return next.encrypted
        ? { type: 'think', think: pending.think + next.think, encrypted: next.encrypted }
        : { type: 'think', think: pending.think + next.think };
    case 'function':
      if (next.type !== 'tool_call_part') return undefined;
      return {
        ...pending,
        function: { name: pending.function.name, arguments: appendFragment(pending.function.arguments, next.argumentsPart) },
      };
    case 'tool_call_part':
      if (next.type !== 'tool_call_part') return undefined;
      return { type: 'tool_call_part', argumentsPart: appendFragment(pending.argumentsPart, next.argumentsPart) };
    default:
      return undefined;
  }
}

function appendFragment(current: string | null, fragment: string | null): string | null {
  if (current === null) return fragment;
  return fragment === null ? current : current + fragment;
}
