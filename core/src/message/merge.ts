import type { StreamedMessagePart } from './parts.js';

/**
 * The part a stream is currently merging into, with the merge rules of kosong (spec §1):
 *
 * - text + text → one text part;
 * - think + think → one think part, unless the pending think already carries a signature
 *   (`encrypted`), which closes it; a signature on the next think is taken over and closes the part;
 * - a tool call absorbs the tool-call parts that follow it (`null` fragments add nothing);
 * - a tool-call part absorbs following tool-call parts (an orphan run, dropped by the message);
 * - nothing else merges (media parts never do).
 *
 * Absorbed fragments are kept in a list and joined once by {@link PendingPart.build}, so a run of
 * 100,000 deltas costs 100,000 pushes and one join, not 100,000 intermediate parts and strings.
 * The parts given are never modified.
 */
export class PendingPart {
  /** `first.type`, kept on this (monomorphic) object: read once per absorbed part. */
  private readonly kind: StreamedMessagePart['type'];
  private readonly chunks: string[] = [];
  /** For tool calls and fragments: whether the arguments are still `null`. */
  private argumentsNull: boolean;
  private signature: string | undefined;

  constructor(readonly first: StreamedMessagePart) {
    this.kind = first.type;
    this.argumentsNull =
      first.type === 'function' ? first.function.arguments === null : first.type === 'tool_call_part' ? first.argumentsPart === null : false;
    this.signature = first.type === 'think' ? first.encrypted : undefined;
  }

  /** Merges `next` in if the rules allow; returns whether it did. */
  absorb(next: StreamedMessagePart): boolean {
    // Text runs are most of a stream: keep their path small enough for the JIT to inline.
    if (this.kind === 'text') {
      if (next.type !== 'text') return false;
      this.chunks.push(next.text);
      return true;
    }
    return this.absorbOther(next);
  }

  private absorbOther(next: StreamedMessagePart): boolean {
    switch (this.kind) {
      case 'think':
        if (next.type !== 'think' || this.signature) return false;
        this.chunks.push(next.think);
        if (next.encrypted) this.signature = next.encrypted;
        return true;
      case 'function':
      case 'tool_call_part':
        if (next.type !== 'tool_call_part') return false;
        if (next.argumentsPart !== null) {
          this.chunks.push(next.argumentsPart);
          this.argumentsNull = false;
        }
        return true;
      default:
        return false;
    }
  }

  /** The merged part: the first part itself when nothing was absorbed, else a new part. */
  build(): StreamedMessagePart {
    const first = this.first;
    if (this.chunks.length === 0 && this.signature === (first.type === 'think' ? first.encrypted : undefined)) return first;
    const joined = this.chunks.join('');
    switch (first.type) {
      case 'text':
        return { type: 'text', text: first.text + joined };
      case 'think':
        return this.signature === undefined
          ? { type: 'think', think: first.think + joined }
          : { type: 'think', think: first.think + joined, encrypted: this.signature };
      case 'function':
        return { ...first, function: { name: first.function.name, arguments: this.argumentsNull ? null : (first.function.arguments ?? '') + joined } };
      case 'tool_call_part':
        return { type: 'tool_call_part', argumentsPart: this.argumentsNull ? null : (first.argumentsPart ?? '') + joined };
      default:
        return first;
    }
  }
}

/**
 * Merges `next` into `pending` by the rules of {@link PendingPart}. Pure: neither argument is
 * modified; a merge returns a new part.
 *
 * @returns the merged part, or `undefined` when the two do not merge.
 */
export function mergePart(pending: StreamedMessagePart, next: StreamedMessagePart): StreamedMessagePart | undefined {
  const merging = new PendingPart(pending);
  return merging.absorb(next) ? merging.build() : undefined;
}
