/**
 * Small deterministic pseudo-random numbers for fault injection (not for anything secret).
 *
 * @module
 */

/** A source of numbers in [0, 1). */
export type RandomSource = () => number;

/** Mulberry32: a 32-bit seeded generator of numbers in [0, 1). The same seed gives the same sequence. */
export function mulberry32(seed: number): RandomSource {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A 32-bit seed for the `index`-th item of a run seeded with `seed` (MurmurHash3's finaliser over
 * both): neighbouring indexes get unrelated seeds, so per-item generators are independent.
 */
export function deriveSeed(seed: number, index: number): number {
  return fmix32((fmix32(seed >>> 0) ^ Math.imul(index >>> 0, 0x9e3779b9)) >>> 0);
}

function fmix32(value: number): number {
  let h = value >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
