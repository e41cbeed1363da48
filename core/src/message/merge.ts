import type { StreamedMessagePart } from './parts.js';

/** Fragments a {@link PendingPart} keeps before joining them (a few kilobytes of list). */
const CHUNKS_PER_JOIN = 1024;

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
 * Absorbed fragments are kept in a list, joined into a string every {@link CHUNKS_PER_JOIN} fragments
 * and once more by {@link PendingPart.build}: a run of 100,000 deltas costs 100,000 pushes and a
 * hundred joins, not 100,000 intermediate parts and strings, and the list never grows past a few
 * kilobytes (a list of 100,000 fragments cost a third more than a hundred lists of 1,000: its
 * backing store was copied as it grew, and by every young-generation collection).
 * The parts given are never modified.
 */
export class PendingPart {
  /** `first.type`, kept on this (monomorphic) object: read once per absorbed part. */
  private readonly kind: StreamedMessagePart['type'];
  /** Fragments not joined yet (created with the first one). */
  private chunks: string[] | undefined;
  /** Fragments joined so far, in order (before `chunks`). */
  private joined = '';
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
      this.add(next.text);
      return true;
    }
    return this.absorbOther(next);
  }

  private absorbOther(next: StreamedMessagePart): boolean {
    switch (this.kind) {
      case 'think':
        if (next.type !== 'think' || this.signature) return false;
        this.add(next.think);
        if (next.encrypted) this.signature = next.encrypted;
        return true;
      case 'function':
      case 'tool_call_part':
        if (next.type !== 'tool_call_part') return false;
        if (next.argumentsPart !== null) {
          this.add(next.argumentsPart);
          this.argumentsNull = false;
        }
        return true;
      default:
        return false;
    }
  }

  private add(fragment: string): void {
    const chunks = this.chunks;
    if (chunks === undefined) {
      this.chunks = [fragment];
    } else if (chunks.push(fragment) === CHUNKS_PER_JOIN) {
      this.joined += chunks.join('');
      chunks.length = 0;
    }
  }

  /** The merged part: the first part itself when nothing was absorbed, else a new part. */
  build(): StreamedMessagePart {
    const first = this.first;
    if (this.chunks === undefined && this.signature === (first.type === 'think' ? first.encrypted : undefined)) return first;
    const joined = this.chunks === undefined ? '' : this.joined + this.chunks.join('');
    switch (first.type) {
      case 'text':
        return { type: 'text', text: first.text + joined };
      case 'think':
        return this.signature === undefined
          ? { type: 'think', think: first.think + joined }
          : { type: 'think', think: first.think + joined, encrypted: this.signature };
      case 'function': {
        const fn = { name: first.function.name, arguments: this.argumentsNull ? null : (first.function.arguments ?? '') + joined };
        return first.extras === undefined ? { type: 'function', id: first.id, function: fn } : { type: 'function', id: first.id, function: fn, extras: first.extras };
      }
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
