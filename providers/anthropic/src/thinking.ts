import type { JsonValue, ThinkingEffort } from '@kosong/core';

/** The beta flag that lets models before adaptive thinking think between tool calls. */
export const INTERLEAVED_THINKING_BETA = 'interleaved-thinking-2025-05-14';

/** A thinking effort other than `off`. */
type Effort = Exclude<ThinkingEffort, 'off'>;

/** Thinking budgets of models without adaptive thinking (kosong spec §7.5). */
const BUDGET_TOKENS: Readonly<Record<'low' | 'medium' | 'high', number>> = { low: 1024, medium: 4096, high: 32_000 };

/** `<family>-<major>[-<minor>]`, e.g. `opus-4-7`, `sonnet-4.6`, `sonnet-5`; not a date (`sonnet-20240620`). */
const FAMILY_VERSION = /(?:opus|sonnet|haiku|fable)[.-](\d{1,2})(?:[.-](\d{1,2}))?(?!\d)/;
const OPUS_VERSION = /opus[.-](\d+)[.-](\d{1,2})(?!\d)/;

/**
 * Whether the model thinks adaptively (`thinking: {type: 'adaptive'}` with an effort): Mythos, and
 * Opus / Sonnet / Haiku / Fable 4.6 and later, whatever the prefix or suffix (`anthropic.claude-opus-4-7-v1:0`,
 * `claude-opus-4.6`, `claude-opus-4-7@20260101`, `claude-sonnet-5`). The Python original also
 * needs a minor version, so it took `claude-sonnet-5` for a model without adaptive thinking.
 */
export function supportsAdaptiveThinking(model: string): boolean {
  const name = model.toLowerCase();
  if (name.includes('mythos')) return true;
  const version = FAMILY_VERSION.exec(name);
  return version !== null && atLeast(Number(version[1]), Number(version[2] ?? 0), 4, 6);
}

/** Whether `output_config.effort` is accepted: adaptive models, and Opus 4.5. */
export function supportsEffortParameter(model: string): boolean {
  const name = model.toLowerCase();
  return supportsAdaptiveThinking(model) || name.includes('opus-4-5') || name.includes('opus-4.5');
}

function isOpus47(model: string): boolean {
  const version = OPUS_VERSION.exec(model.toLowerCase());
  return version !== null && Number(version[1]) === 4 && Number(version[2]) === 7;
}

/**
 * The effort the model gets for the one asked (kosong spec §7.5): Opus 4.7 has every level; other
 * adaptive models lack `xhigh`; older models have `low`, `medium` and `high`. A level the model
 * lacks becomes `high`; `off` stays `off`.
 */
export function clampEffort(model: string, effort: ThinkingEffort): ThinkingEffort {
  if (effort === 'off' || effort === 'low' || effort === 'medium' || effort === 'high') return effort;
  if (isOpus47(model)) return effort;
  if (effort === 'max' && supportsAdaptiveThinking(model)) return 'max';
  return 'high';
}

/** What a thinking effort adds to a request. */
export interface ThinkingRequest {
  /** The `thinking` field. */
  readonly thinking: JsonValue;
  /** The `output_config` field, when the model takes an effort. */
  readonly outputConfig: JsonValue | undefined;
}

/**
 * The request fields of a (clamped) effort on a model (kosong spec §7.5):
 *
 * - `off` → `thinking: {type: 'disabled'}`, no `output_config`;
 * - adaptive models → `thinking: {type: 'adaptive', display: 'summarized'}` and
 *   `output_config: {effort}`;
 * - older models → `thinking: {type: 'enabled', budget_tokens}` (1024 / 4096 / 32000 for low /
 *   medium / high), plus `output_config: {effort}` where the model takes one (Opus 4.5).
 */
export function thinkingRequest(model: string, effort: ThinkingEffort): ThinkingRequest {
  if (effort === 'off') return { thinking: { type: 'disabled' }, outputConfig: undefined };
  if (supportsAdaptiveThinking(model)) return { thinking: { type: 'adaptive', display: 'summarized' }, outputConfig: { effort } };
  const budget = BUDGET_TOKENS[effort as keyof typeof BUDGET_TOKENS] ?? BUDGET_TOKENS.high;
  return {
    thinking: { type: 'enabled', budget_tokens: budget },
    outputConfig: supportsEffortParameter(model) ? { effort: effort satisfies Effort } : undefined,
  };
}

function atLeast(major: number, minor: number, wantMajor: number, wantMinor: number): boolean {
  return major > wantMajor || (major === wantMajor && minor >= wantMinor);
}
