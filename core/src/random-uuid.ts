/**
 * Random (version 4) UUIDs — step ids, turn ids — made without `crypto.randomUUID()`'s garbage. That one builds
 * its text by concatenation, a rope of 16 pieces (~0.6 KB of heap per id, more than a small step's
 * other garbage of its kind); here the digits are written into one buffer and read out as one flat
 * string. The random bytes come from `crypto.randomFillSync`, 16 per id, drawn from a pool refilled
 * when used up (as `randomUUID` does with its entropy cache). `node:crypto` is loaded at the first
 * id, not at import: it loads a graph of Node's internal modules that would cost a process that only
 * imports kosong (`kosong --help`) about as much as the step runtime's own modules.
 *
 * @module
 */

/** Ids per refill of the pool. */
const IDS_PER_POOL = 128;

let pool: Uint8Array | undefined;
/** The next unused byte of the pool (`pool.length`: used up). */
let next = 0;
/** The id being written: the hyphens stay, the 32 hex digits are rewritten each time. */
const text = Buffer.alloc(36, '-', 'latin1');
const HEX = Buffer.from('0123456789abcdef', 'latin1');
/** Where the two digits of each of the 16 bytes go in the text. */
const DIGITS_AT = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34];

/** A fresh random (version 4) UUID, lowercase, as one flat string. */
export function randomUUID(): string {
  if (pool === undefined || next === pool.length) {
    pool ??= new Uint8Array(16 * IDS_PER_POOL);
    process.getBuiltinModule('node:crypto').randomFillSync(pool);
    next = 0;
  }
  for (let i = 0; i < 16; i++) {
    let byte = pool[next + i]!;
    if (i === 6) byte = (byte & 0x0f) | 0x40; // version 4
    else if (i === 8) byte = (byte & 0x3f) | 0x80; // variant 10
    const at = DIGITS_AT[i]!;
    text[at] = HEX[byte >> 4]!;
    text[at + 1] = HEX[byte & 0x0f]!;
  }
  next += 16;
  return text.toString('latin1');
}
