/**
 * Variants of the `arguments` suite. Each run parses its 1 MiB text {@link PARSES_PER_RUN} times (one
 * parse is about a millisecond: too short to time alone) and checks every outcome in `verify`.
 *
 * @module
 */
import { parseToolArguments, type ParsedArguments } from '@kosong/core/toolset-kit';
import type { PreparedVariant } from '../../harness.js';

/** Parses per timed run. */
export const PARSES_PER_RUN = 20;
const MIB = 1024 * 1024;

/** `{"s":"xxx…"}`, 1 MiB. */
const valid = `{"s":"${'x'.repeat(MIB - 8)}"}`;
/** A string with a raw newline every 64 characters: JSON.parse refuses it, the repair accepts it. */
const rawNewlines = `{"s":"${`${'y'.repeat(63)}\n`.repeat(MIB / 64 - 1)}"}`;
/** An unterminated string of escaped quotes. */
const openQuotes = `{"s":"${'\\"'.repeat(MIB / 2 - 4)}`;
/** A raw newline (so the repair runs), then invalid escapes, never closed. */
const badEscapes = `{"s":"\n${'\\a'.repeat(MIB / 2 - 4)}`;

export function prepareJsonParse(): PreparedVariant<unknown[]> {
  return {
    async run() {
      const values: unknown[] = [];
      for (let i = 0; i < PARSES_PER_RUN; i++) values.push(JSON.parse(valid));
      return values;
    },
    verify(values) {
      if (values.length !== PARSES_PER_RUN || values.some((v) => (v as { s: string }).s.length !== MIB - 8)) throw new Error('json-parse: wrong value');
    },
  };
}

export const prepareValid = (): PreparedVariant<ParsedArguments[]> => parses('valid', valid, (r) => r.ok && (r.value as { s: string }).s.length === MIB - 8);
export const prepareRawNewlines = (): PreparedVariant<ParsedArguments[]> =>
  parses('raw-newlines', rawNewlines, (r) => r.ok && (r.value as { s: string }).s.length === MIB - 64);
export const prepareOpenQuotes = (): PreparedVariant<ParsedArguments[]> => parses('open-quotes', openQuotes, (r) => !r.ok && r.error.length > 0);
export const prepareBadEscapes = (): PreparedVariant<ParsedArguments[]> => parses('bad-escapes', badEscapes, (r) => !r.ok && r.error.length > 0);

function parses(label: string, text: string, expected: (result: ParsedArguments) => boolean): PreparedVariant<ParsedArguments[]> {
  return {
    async run() {
      const results: ParsedArguments[] = [];
      for (let i = 0; i < PARSES_PER_RUN; i++) results.push(parseToolArguments(text));
      return results;
    },
    verify(results) {
      if (results.length !== PARSES_PER_RUN || !results.every(expected)) throw new Error(`${label}: unexpected outcome ${JSON.stringify(results[0]).slice(0, 200)}`);
    },
  };
}
