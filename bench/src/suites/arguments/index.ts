/**
 * The `arguments` suite: `parseToolArguments` on 1 MB of hostile tool-call arguments — texts built to
 * make a repair that backtracks or recurses slow (quadratic) or crash (stack overflow) — next to
 * `JSON.parse` of 1 MB of valid arguments, the floor. One process parses for every tenant: a
 * slow parse freezes them all.
 *
 * @module
 */
import type { Suite } from '../../harness.js';
import { PARSES_PER_RUN } from './variants.js';

export const argumentsSuite: Suite = {
  name: 'arguments',
  title: 'Tool-call arguments: parseToolArguments on 1 MB of hostile text',
  workload: `${PARSES_PER_RUN} parses of 1 MiB of tool-call arguments per run`,
  baseline: 'json-parse',
  variants: [
    {
      name: 'json-parse',
      description: '`JSON.parse` of valid arguments, `{"s":"xxx…"}`: the floor',
      load: async () => ({ prepare: (await import('./variants.js')).prepareJsonParse }),
    },
    {
      name: 'valid',
      description: '`parseToolArguments` of the same valid arguments',
      load: async () => ({ prepare: (await import('./variants.js')).prepareValid }),
    },
    {
      name: 'raw-newlines',
      description: '`parseToolArguments` of a string with a raw newline every 64 chars (repaired, then parsed)',
      load: async () => ({ prepare: (await import('./variants.js')).prepareRawNewlines }),
    },
    {
      name: 'open-quotes',
      description: '`parseToolArguments` of `{"s":"` + `\\"` × 512 Ki, never closed (was quadratic: 120 KB took 8.8 s)',
      load: async () => ({ prepare: (await import('./variants.js')).prepareOpenQuotes }),
    },
    {
      name: 'bad-escapes',
      description: '`parseToolArguments` of `{"s":"\\n` + `\\a` × 512 Ki, never closed (was a stack overflow)',
      load: async () => ({ prepare: (await import('./variants.js')).prepareBadEscapes }),
    },
  ],
  targets: [
    { variant: 'open-quotes', baseline: 'json-parse', maxRatio: 4 },
    { variant: 'bad-escapes', baseline: 'json-parse', maxRatio: 4 },
  ],
};
