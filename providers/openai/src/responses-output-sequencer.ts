import { ChatProviderError, type StreamedMessagePart } from '@kosong/core';

/** What tells the output items of a response apart: their `output_index`, else their `item_id`. */
export type OutputItemKey = number | string;

interface ItemSlot {
  readonly key: OutputItemKey;
  /** Parts pushed for the item so far. */
  received: number;
  done: boolean;
  /** Parts held back while an earlier item streams; `undefined` once released. */
  held: StreamedMessagePart[] | undefined;
}

/**
 * Orders the parts of a Responses stream item by item, so that the parts of one output item (a
 * message, a reasoning item, a function call) are never mixed with another's: kosong merges a tool
 * call with the argument fragments that follow it, so two calls whose deltas interleave must not
 * reach the stream interleaved.
 *
 * Items stream in the order they first appear. The first item that is not done is *active*: its
 * parts go out at once. Parts of later items are held until every item before them is done (their
 * `response.output_item.done`), or until the stream ends. In the usual case (the API streams its
 * items one after another) nothing is held. An item gets no more parts once it is done.
 */
export class OutputItemSequencer {
  readonly #slots = new Map<OutputItemKey, ItemSlot>();
  /** Items after the active one that are not released yet, in order. */
  readonly #waiting: ItemSlot[] = [];
  #active: ItemSlot | undefined;
  #activeKey: OutputItemKey | undefined;

  /** Registers an item (its `response.output_item.added`), if it is new. */
  add(key: OutputItemKey): void {
    this.#slot(key);
  }

  /** Whether an item with this key appeared. */
  has(key: OutputItemKey): boolean {
    return this.#slots.has(key);
  }

  /** How many parts were pushed for an item (0 for an unknown item). */
  received(key: OutputItemKey): number {
    return this.#slots.get(key)?.received ?? 0;
  }

  /** Whether any item appeared. */
  get empty(): boolean {
    return this.#slots.size === 0;
  }

  /**
   * A part of an item: written to `out` if the item is active, else held.
   *
   * @throws {ChatProviderError} if the item is already done.
   */
  push(key: OutputItemKey, part: StreamedMessagePart, out: StreamedMessagePart[]): void {
    if (key === this.#activeKey) {
      // the hot path: text deltas of the item that is streaming
      const active = this.#active!;
      if (!active.done) {
        active.received++;
        out.push(part);
        return;
      }
    }
    const slot = this.#slot(key);
    if (slot.done) throw new ChatProviderError(`The server sent more output for item ${describe(key)} after it was done`);
    slot.received++;
    if (slot.held === undefined) out.push(part);
    else slot.held.push(part);
  }

  /** An item is done (`response.output_item.done`): the items after it that can go out, go out. */
  done(key: OutputItemKey, out: StreamedMessagePart[]): void {
    const slot = this.#slot(key);
    slot.done = true;
    if (slot !== this.#active) return;
    while (this.#active?.done) {
      const next = this.#waiting.shift();
      this.#activate(next, out);
    }
  }

  /** The stream ended: every held part goes out, item by item. */
  finish(out: StreamedMessagePart[]): void {
    for (const slot of this.#waiting.splice(0)) this.#release(slot, out);
    this.#active = undefined;
    this.#activeKey = undefined;
  }

  #slot(key: OutputItemKey): ItemSlot {
    let slot = this.#slots.get(key);
    if (slot !== undefined) return slot;
    slot = { key, received: 0, done: false, held: [] };
    this.#slots.set(key, slot);
    if (this.#active === undefined) this.#activate(slot, []);
    else this.#waiting.push(slot);
    return slot;
  }

  #activate(slot: ItemSlot | undefined, out: StreamedMessagePart[]): void {
    this.#active = slot;
    this.#activeKey = slot?.key;
    if (slot !== undefined) this.#release(slot, out);
  }

  #release(slot: ItemSlot, out: StreamedMessagePart[]): void {
    const held = slot.held;
    slot.held = undefined;
    if (held !== undefined) for (const part of held) out.push(part);
  }
}

function describe(key: OutputItemKey): string {
  return typeof key === 'number' ? `#${key}` : JSON.stringify(key);
}
