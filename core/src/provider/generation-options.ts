/**
 * Provider-neutral generation options: what every provider maps to its own API, or refuses with an
 * {@link UnsupportedGenerationOptionError}. Options are set on a provider (`withGeneration`) and per
 * call (`generate`, `step({ generation })`, `runner.step`, the agent loop); per-call values win,
 * field by field.
 *
 * @module
 */

import type { Tool } from '../tooling/tool.js';
import { InvalidGenerationOptionError, UnsupportedGenerationOptionError } from './generation-option-errors.js';

/**
 * Which tool the model may or must call: `auto` (it decides), `none` (no tool), `required` (some
 * tool), or one tool by name (`{ type: 'tool', name }`, which must be among the request's tools).
 */
export type ToolChoice = 'auto' | 'none' | 'required' | { readonly type: 'tool'; readonly name: string };

/**
 * Generation options every provider understands. Every field is optional; an unset field leaves the
 * provider's (or the API's) default. A field set to `undefined` counts as unset.
 */
export interface GenerationOptions {
  /** Cap on generated tokens (reasoning included where the API counts it): a positive integer. */
  readonly maxOutputTokens?: number;
  /** Sampling temperature, a finite number from 0 to 2 (some providers allow less, e.g. up to 1). */
  readonly temperature?: number;
  /** Nucleus sampling, a finite number from 0 to 1. */
  readonly topP?: number;
  /** Sequences at which the model stops (non-empty strings). `[]` means none, and clears the provider's. */
  readonly stopSequences?: readonly string[];
  /** Seed for sampling that repeats, where the provider has one: a safe integer. */
  readonly seed?: number;
  /** Which tool the model may or must call (see {@link ToolChoice}). */
  readonly toolChoice?: ToolChoice;
  /** Whether the model may call several tools in one response. */
  readonly parallelToolCalls?: boolean;
}

/** The name of one generation option. */
export type GenerationOptionName = keyof GenerationOptions;

/** Every generation option, in a fixed order. */
export const GENERATION_OPTION_NAMES: readonly GenerationOptionName[] = Object.freeze([
  'maxOutputTokens',
  'temperature',
  'topP',
  'stopSequences',
  'seed',
  'toolChoice',
  'parallelToolCalls',
] as const);

/** The largest temperature {@link validateGenerationOptions} accepts (providers may accept less). */
export const MAX_TEMPERATURE = 2;

const KNOWN: ReadonlySet<string> = new Set(GENERATION_OPTION_NAMES);
const EMPTY: GenerationOptions = Object.freeze({});

/**
 * The options objects known to be checked and frozen (made by {@link validateGenerationOptions} or
 * merged from such): checking one again returns it as it is, with nothing allocated.
 */
const CHECKED = new WeakSet<GenerationOptions>([EMPTY]);

/** Whether `options` (an object) has no own enumerable property: it checks as no options. @internal */
export function hasNoOwnKeys(options: object): boolean {
  for (const key in options) if (Object.hasOwn(options, key)) return false;
  return true;
}

/**
 * Checks generation options and returns a frozen copy without unset fields.
 *
 * @param provider named in the error, when known.
 * @throws {InvalidGenerationOptionError} for a value out of range or of the wrong type, or an
 * unknown option name (a misspelt option is an error, not silently ignored).
 */
export function validateGenerationOptions(options: GenerationOptions, provider?: string): GenerationOptions {
  const invalid = (option: string, reason: string): InvalidGenerationOptionError =>
    new InvalidGenerationOptionError(option, reason, { provider });
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw invalid('generation', `the options must be an object, got ${describe(options)}`);
  }
  if (CHECKED.has(options)) return options;
  if (hasNoOwnKeys(options)) return EMPTY;
  const result: { -readonly [K in GenerationOptionName]?: GenerationOptions[K] } = {};
  for (const key of Object.keys(options)) {
    if (!KNOWN.has(key)) throw invalid(key, `unknown option (known: ${GENERATION_OPTION_NAMES.join(', ')})`);
  }
  const { maxOutputTokens, temperature, topP, stopSequences, seed, toolChoice, parallelToolCalls } = options;
  if (maxOutputTokens !== undefined) {
    if (!Number.isSafeInteger(maxOutputTokens) || maxOutputTokens < 1) {
      throw invalid('maxOutputTokens', `must be a positive integer, got ${describe(maxOutputTokens)}`);
    }
    result.maxOutputTokens = maxOutputTokens;
  }
  if (temperature !== undefined) {
    if (!isNumberIn(temperature, 0, MAX_TEMPERATURE)) throw invalid('temperature', `must be a finite number from 0 to ${MAX_TEMPERATURE}, got ${describe(temperature)}`);
    result.temperature = temperature;
  }
  if (topP !== undefined) {
    if (!isNumberIn(topP, 0, 1)) throw invalid('topP', `must be a finite number from 0 to 1, got ${describe(topP)}`);
    result.topP = topP;
  }
  if (stopSequences !== undefined) {
    if (!Array.isArray(stopSequences)) throw invalid('stopSequences', `must be an array of strings, got ${describe(stopSequences)}`);
    const sequences: string[] = [];
    for (const sequence of stopSequences as readonly unknown[]) {
      if (typeof sequence !== 'string' || sequence === '') {
        throw invalid('stopSequences', `every sequence must be a non-empty string, got ${describe(sequence)}`);
      }
      sequences.push(sequence);
    }
    result.stopSequences = Object.freeze(sequences);
  }
  if (seed !== undefined) {
    if (!Number.isSafeInteger(seed)) throw invalid('seed', `must be a safe integer, got ${describe(seed)}`);
    result.seed = seed;
  }
  if (toolChoice !== undefined) result.toolChoice = checkToolChoice(toolChoice, invalid);
  if (parallelToolCalls !== undefined) {
    if (typeof parallelToolCalls !== 'boolean') throw invalid('parallelToolCalls', `must be a boolean, got ${describe(parallelToolCalls)}`);
    result.parallelToolCalls = parallelToolCalls;
  }
  const checked = Object.freeze(result);
  CHECKED.add(checked);
  return checked;
}

/** Whether `options` is known to be checked and frozen (see {@link validateGenerationOptions}). @internal */
export function isCheckedGenerationOptions(options: GenerationOptions | undefined): boolean {
  return options === undefined || CHECKED.has(options);
}

/**
 * `override` merged over `base`, field by field: a field `override` sets (to anything but
 * `undefined`) wins. Does not validate (unknown fields are kept, for validation to find them).
 */
export function mergeGenerationOptions(base: GenerationOptions, override: GenerationOptions | undefined): GenerationOptions {
  // A provider written before `generation` existed (plain JavaScript) has none: read it as empty.
  const own: GenerationOptions = typeof base === 'object' && (base as unknown) !== null ? base : EMPTY;
  if (override === undefined || typeof override !== 'object' || (override as unknown) === null) return own;
  const merged: Record<string, unknown> = { ...own };
  for (const [name, value] of Object.entries(override)) if (value !== undefined) merged[name] = value;
  return Object.freeze(merged) as GenerationOptions;
}

/**
 * What `withGeneration` does: checks `update` and merges it over `current` (a field `update` sets wins).
 *
 * @throws {InvalidGenerationOptionError} for a bad value in `update`, naming `provider`.
 */
export function updateGenerationOptions(current: GenerationOptions, update: GenerationOptions, provider?: string): GenerationOptions {
  const merged = mergeGenerationOptions(current, validateGenerationOptions(update, provider));
  // both sides checked: so is their merge (frozen, every field from a checked object)
  if (CHECKED.has(current)) CHECKED.add(merged);
  return merged;
}

/**
 * The options a provider should honour for one call: its own (`configured`, from `withGeneration`)
 * with the call's merged over them (per-call wins, field by field), checked, and with `toolChoice`
 * checked against the request's tools (a named tool must be among them; `required` needs at least one).
 *
 * @throws {InvalidGenerationOptionError} naming the provider and the option.
 */
export function resolveGenerationOptions(
  provider: string,
  configured: GenerationOptions,
  perCall: GenerationOptions | undefined,
  tools: readonly Tool[],
): GenerationOptions {
  const base = configured === EMPTY || (configured as unknown) === undefined ? EMPTY : validateGenerationOptions(configured, provider);
  const effective = perCall === undefined ? base : mergeGenerationOptions(base, validateGenerationOptions(perCall, provider));
  const choice = effective.toolChoice;
  if (choice === 'required' && tools.length === 0) {
    throw new InvalidGenerationOptionError('toolChoice', 'is "required" but the request has no tools', { provider });
  }
  if (typeof choice === 'object' && !tools.some((tool) => tool.name === choice.name)) {
    const offered = tools.length === 0 ? 'the request has no tools' : `the request's tools are ${tools.map((t) => JSON.stringify(t.name)).join(', ')}`;
    throw new InvalidGenerationOptionError('toolChoice', `names the tool ${JSON.stringify(choice.name)}, but ${offered}`, { provider });
  }
  return effective;
}

/**
 * Throws for the first of `unsupported` that `options` sets: how a provider refuses options its API
 * does not have, instead of dropping them.
 *
 * @throws {UnsupportedGenerationOptionError} naming the provider and the option.
 */
export function rejectUnsupportedGenerationOptions(provider: string, options: GenerationOptions, unsupported: readonly GenerationOptionName[]): void {
  for (const name of unsupported) {
    if (options[name] !== undefined) throw new UnsupportedGenerationOptionError(provider, name);
  }
}

/** The empty options (frozen), what a provider has before `withGeneration`. */
export function noGenerationOptions(): GenerationOptions {
  return EMPTY;
}

function checkToolChoice(choice: unknown, invalid: (option: string, reason: string) => Error): ToolChoice {
  if (choice === 'auto' || choice === 'none' || choice === 'required') return choice;
  if (typeof choice === 'object' && choice !== null && !Array.isArray(choice)) {
    const { type, name } = choice as { readonly type?: unknown; readonly name?: unknown };
    if (type === 'tool' && typeof name === 'string' && name !== '') return Object.freeze({ type: 'tool', name });
  }
  throw invalid('toolChoice', `must be "auto", "none", "required" or { type: "tool", name: "<a tool's name>" }, got ${describe(choice)}`);
}

function isNumberIn(value: unknown, min: number, max: number): boolean {
  return typeof value === 'number' && Number.isFinite(value) && value >= min && value <= max;
}

/** A short description of a bad value for an error message (never more than ~80 characters). */
function describe(value: unknown): string {
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint' || value === undefined || value === null) return String(value);
  let text: string;
  try {
    text = typeof value === 'string' ? JSON.stringify(value) : (JSON.stringify(value) ?? typeof value);
  } catch {
    text = Object.prototype.toString.call(value);
  }
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
