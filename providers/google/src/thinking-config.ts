import type { ThinkingEffort } from '@kosong/core';

/**
 * The `thinkingConfig` of a Gemini request, in the REST API's casing: a `thinkingLevel` for the
 * gemini-3 models, a `thinkingBudget` (tokens) for the older ones.
 */
export interface ThinkingConfig {
  readonly includeThoughts?: boolean;
  readonly thinkingLevel?: 'MINIMAL' | 'LOW' | 'MEDIUM' | 'HIGH';
  readonly thinkingBudget?: number;
}

/** Whether the model takes a `thinkingLevel` (the gemini-3 family) rather than a budget. */
export function usesThinkingLevel(model: string): boolean {
  return model.includes('gemini-3');
}

/**
 * The thinking config for an effort (kosong spec §7.6). Thoughts are always included, except when
 * an older model is told `off`.
 *
 * - gemini-3 models: `low` → level `LOW`; `medium`, `high`, `xhigh`, `max` → `HIGH`; `off` sends no
 *   level (those models cannot stop thinking);
 * - older models: `off` → budget 0 without thoughts; `low` → 1024; `medium` → 4096;
 *   `high`, `xhigh`, `max` → 32000.
 */
export function thinkingConfigFor(model: string, effort: ThinkingEffort): ThinkingConfig {
  if (usesThinkingLevel(model)) {
    if (effort === 'off') return { includeThoughts: true };
    return { includeThoughts: true, thinkingLevel: effort === 'low' ? 'LOW' : 'HIGH' };
  }
  switch (effort) {
    case 'off':
      return { includeThoughts: false, thinkingBudget: 0 };
    case 'low':
      return { includeThoughts: true, thinkingBudget: 1024 };
    case 'medium':
      return { includeThoughts: true, thinkingBudget: 4096 };
    default:
      return { includeThoughts: true, thinkingBudget: 32_000 };
  }
}

/**
 * The effort a thinking config amounts to (kosong spec §7.6): a level `LOW`/`MINIMAL` reads `low`,
 * `MEDIUM` `medium`, `HIGH` `high`; a budget of 0 reads `off`, up to 1024 `low`, up to 4096
 * `medium`, more `high`; a config with neither (a gemini-3 model told `off`) reads `undefined`.
 */
export function thinkingEffortOf(config: ThinkingConfig | undefined): ThinkingEffort | undefined {
  if (config === undefined) return undefined;
  switch (config.thinkingLevel) {
    case 'LOW':
    case 'MINIMAL':
      return 'low';
    case 'MEDIUM':
      return 'medium';
    case 'HIGH':
      return 'high';
    case undefined:
      break;
  }
  const budget = config.thinkingBudget;
  if (budget === undefined) return undefined;
  if (budget === 0) return 'off';
  if (budget <= 1024) return 'low';
  if (budget <= 4096) return 'medium';
  return 'high';
}
