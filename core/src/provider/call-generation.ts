/**
 * The generation options of one call, resolved once. Core resolves them before it calls a provider
 * ({@link resolveCallGeneration}) and hands the result over in
 * `ProviderGenerateOptions.resolvedGeneration`; a provider takes them with {@link generationForCall},
 * which resolves them itself only when nobody did (a direct `provider.generate(…)` call).
 *
 * @module
 */

import type { Tool } from '../tooling/tool.js';
import type { ChatProvider, ProviderGenerateOptions, ResolvedGeneration } from './chat-provider.js';
import { hasNoOwnKeys, isCheckedGenerationOptions, resolveGenerationOptions, type GenerationOptions } from './generation-options.js';

export type { ResolvedGeneration } from './chat-provider.js';

/**
 * What core does before it calls `provider.generate`: the call's options merged over the provider's
 * own and checked (see `resolveGenerationOptions`), with what they were resolved from.
 *
 * @throws {InvalidGenerationOptionError} naming the provider and the option.
 */
export function resolveCallGeneration(
  provider: Pick<ChatProvider, 'name' | 'generation'>,
  perCall: GenerationOptions | undefined,
  tools: readonly Tool[],
): ResolvedGeneration {
  const configured = provider.generation;
  // The usual call: no options of its own, the provider's own ones settled (checked and frozen, or
  // still none), the tools of the call before. It resolves as before: the last one is handed over again.
  const last = lastResolved;
  if (perCall === undefined && last !== undefined && last.configured === configured && last.tools === tools && isSettled(configured)) return last;
  const resolved: ResolvedGeneration = { options: resolveGenerationOptions(provider.name, configured, perCall, tools), configured, tools };
  // A `toolChoice` is checked against the tools' names, which an array changed in place would escape.
  if (perCall === undefined && isSettled(configured) && resolved.options.toolChoice === undefined) {
    lastResolved = Object.freeze(resolved);
    lastCarrier = Object.create(Object.prototype, { resolvedGeneration: { value: resolved } }) as object;
  }
  return resolved;
}

/**
 * Whether a provider's own options resolve now as they did before, if they are the same object:
 * checked ones are frozen; a plain object without fields (a provider that sets none) is looked at
 * again each time, as it may have got one since.
 */
function isSettled(configured: GenerationOptions | undefined): boolean {
  return isCheckedGenerationOptions(configured) || hasNoOwnKeys(configured!);
}

/** The last call's resolution that {@link resolveCallGeneration} may hand over again. */
let lastResolved: ResolvedGeneration | undefined;
/** A prototype holding `lastResolved` as `resolvedGeneration` (not enumerable), for {@link newCallOptions}. */
let lastCarrier: object | undefined;

/**
 * A new, empty options object for one `generate` call whose `resolvedGeneration` is `resolved`, not
 * enumerable (as {@link withResolvedGeneration} makes it). For the resolution handed over again it
 * is inherited from a prototype made once (a plain object's constructor, keys and JSON), so that
 * the usual call defines no property at run time. @internal
 */
export function newCallOptions(resolved: ResolvedGeneration): Record<string, unknown> {
  if (resolved === lastResolved && lastCarrier !== undefined) return Object.create(lastCarrier) as Record<string, unknown>;
  return withResolvedGeneration({}, resolved);
}

/**
 * `options` with `resolved` as its `resolvedGeneration`, a property that is not enumerable: the
 * options object enumerates, serialises and compares as it did before the field existed (a provider
 * that logs or checks its options sees what it saw), and a copy made with a spread leaves it out (a
 * provider given such a copy resolves the options itself).
 */
export function withResolvedGeneration<T extends ProviderGenerateOptions>(options: T, resolved: ResolvedGeneration): T {
  return Object.defineProperty(options, 'resolvedGeneration', { value: resolved });
}

/**
 * The generation options a provider honours in one `generate` call: the ones core resolved
 * (`options.resolvedGeneration`) when they were resolved from this provider's own options and for
 * these very tools, else resolved here from `provider.generation` and `options.generation` (a call
 * that did not come through core, or came through a wrapper that changed either).
 *
 * @example
 * async generate(systemPrompt, tools, history, options = {}) {
 *   const generation = generationForCall(this, tools, options);
 *   // … map `generation` to the API's fields
 * }
 * @throws {InvalidGenerationOptionError} when it resolves them itself and an option is bad.
 */
export function generationForCall(
  provider: Pick<ChatProvider, 'name' | 'generation'>,
  tools: readonly Tool[],
  options: ProviderGenerateOptions | undefined,
): GenerationOptions {
  const resolved = options?.resolvedGeneration;
  const configured = provider.generation;
  if (resolved !== undefined && resolved.configured === configured && resolved.tools === tools) return resolved.options;
  return resolveGenerationOptions(provider.name, configured, options?.generation, tools);
}
