/**
 * Configuration of {@link ChaosChatProvider}: which faults, how often, with which seed.
 *
 * @module
 */
import { randomInt } from 'node:crypto';

/**
 * A fault a generate call can be hit by:
 * `connection` (`generate` rejects with `APIConnectionError`), `timeout` (`APITimeoutError`),
 * `429` / `500` / `502` / `503` (`APIStatusError` with that status; a 429 carries `retryAfterSeconds`),
 * `disconnect` (`generate` succeeds, then the stream throws `APIConnectionError` after 0–3 parts).
 */
export type ChaosFault = 'connection' | 'timeout' | '429' | '500' | '502' | '503' | 'disconnect';

/** Every {@link ChaosFault}, in the order the fault draw walks them. */
export const CHAOS_FAULTS: readonly ChaosFault[] = Object.freeze(['connection', 'timeout', '429', '500', '502', '503', 'disconnect']);

/** A fault that was injected, as reported to {@link ChaosConfig.onFault}. */
export interface ChaosFaultEvent {
  /** 0-based index of the `generate` call on this provider. */
  readonly call: number;
  /** The fault; `corrupt_tool_call` for a tool call (or fragment) whose trailing `}` was dropped. */
  readonly fault: ChaosFault | 'corrupt_tool_call';
}

/**
 * How a {@link ChaosChatProvider} misbehaves. Defaults follow the original kosong `ChaosConfig`
 * (30 % errors, 10 % tool-call corruption, `retry-after` 2 s).
 *
 * Each `generate` call draws once: with probability `errorProbability` it is hit by one of
 * `faults`, chosen in proportion to the weights. So fault `f` hits a call with probability
 * `errorProbability * faults[f] / sum(faults)`.
 */
export interface ChaosConfig {
  /** Probability, per `generate` call, of a fault. Default 0.3. */
  readonly errorProbability?: number;
  /**
   * Relative weights of the faults when a call is hit. Default: every {@link ChaosFault} with weight 1.
   * A fault left out (or with weight 0) never happens, e.g. `{ '429': 1 }` gives only 429s.
   */
  readonly faults?: Readonly<Partial<Record<ChaosFault, number>>>;
  /**
   * Probability that a streamed tool call (or arguments fragment) whose arguments end with `}`
   * loses that `}`, so its arguments are no longer valid JSON. Drawn per such part. Default 0.1.
   */
  readonly corruptToolCallProbability?: number;
  /** `retryAfterSeconds` of injected 429 errors. Default 2. */
  readonly retryAfterSeconds?: number;
  /** Seed of the fault sequence: the same seed gives the same faults. Default: a random one. */
  readonly seed?: number;
  /** Told about every injected fault, when it strikes (for logs). Must not throw: its error would replace the fault. */
  readonly onFault?: (event: ChaosFaultEvent) => void;
}

/** A {@link ChaosConfig} checked and with its defaults filled in. @internal */
export interface ChaosSettings {
  readonly errorProbability: number;
  readonly weights: ReadonlyMap<ChaosFault, number>;
  readonly totalWeight: number;
  readonly corruptToolCallProbability: number;
  readonly retryAfterSeconds: number;
  readonly seed: number;
  readonly onFault: ((event: ChaosFaultEvent) => void) | undefined;
}

/**
 * Checks a config and fills in its defaults; a missing seed is drawn at random.
 *
 * @throws RangeError naming the field for a probability outside [0, 1], a negative or non-finite
 *   number, an unknown fault, or no fault with a positive weight while `errorProbability` > 0.
 * @internal
 */
export function resolveChaosConfig(config: ChaosConfig): ChaosSettings {
  const errorProbability = probability(config.errorProbability ?? 0.3, 'errorProbability');
  const corruptToolCallProbability = probability(config.corruptToolCallProbability ?? 0.1, 'corruptToolCallProbability');
  const retryAfterSeconds = nonNegative(config.retryAfterSeconds ?? 2, 'retryAfterSeconds');

  const weights = new Map<ChaosFault, number>();
  const given: Readonly<Record<string, number | undefined>> = config.faults ?? Object.fromEntries(CHAOS_FAULTS.map((f) => [f, 1]));
  for (const [fault, weight] of Object.entries(given)) {
    if (!(CHAOS_FAULTS as readonly string[]).includes(fault)) {
      throw new RangeError(`ChaosConfig.faults: unknown fault '${fault}' (known: ${CHAOS_FAULTS.join(', ')})`);
    }
    if (weight !== undefined) weights.set(fault as ChaosFault, nonNegative(weight, `faults['${fault}']`));
  }
  let totalWeight = 0;
  for (const weight of weights.values()) totalWeight += weight;
  if (errorProbability > 0 && totalWeight <= 0) {
    throw new RangeError('ChaosConfig.faults must give at least one fault a positive weight when errorProbability > 0');
  }

  let seed: number;
  if (config.seed === undefined) seed = randomInt(0, 2 ** 32);
  else if (Number.isFinite(config.seed)) seed = Math.trunc(config.seed) >>> 0;
  else throw new RangeError(`ChaosConfig.seed must be a finite number, got ${config.seed}`);

  return { errorProbability, weights, totalWeight, corruptToolCallProbability, retryAfterSeconds, seed, onFault: config.onFault };
}

/**
 * The fault of a call, from one uniform draw `u` in [0, 1): none if `u >= errorProbability`,
 * otherwise the fault whose slice of the weights `u / errorProbability` falls in. @internal
 */
export function pickFault(settings: ChaosSettings, u: number): ChaosFault | undefined {
  if (u >= settings.errorProbability) return undefined;
  let rest = (u / settings.errorProbability) * settings.totalWeight;
  let last: ChaosFault | undefined;
  for (const fault of CHAOS_FAULTS) {
    const weight = settings.weights.get(fault) ?? 0;
    if (weight <= 0) continue;
    if (rest < weight) return fault;
    rest -= weight;
    last = fault;
  }
  return last; // only reached through rounding at the very top of the range
}

/**
 * A {@link ChaosConfig} from environment variables, as the original's `ChaosConfig.from_env()`:
 * `CHAOS_ERROR_PROBABILITY` (default 0.3), `CHAOS_ERROR_TYPES` (comma list of faults, e.g.
 * `429,500,connection`; a fault listed twice weighs double; default: all),
 * `CHAOS_CORRUPT_TOOL_CALL_PROBABILITY` (0.1), `CHAOS_RETRY_AFTER` (seconds, 2) and `CHAOS_SEED`
 * (unset or empty: random). Unset or empty variables take their defaults.
 *
 * @throws RangeError naming the variable when a value is not a number or not a known fault.
 */
export function chaosConfigFromEnv(env: Readonly<Record<string, string | undefined>> = process.env): ChaosConfig {
  const number = (name: string): number | undefined => {
    const raw = env[name]?.trim();
    if (raw === undefined || raw === '') return undefined;
    const value = Number(raw);
    if (!Number.isFinite(value)) throw new RangeError(`${name} must be a number, got '${raw}'`);
    return value;
  };
  const config: { -readonly [K in keyof ChaosConfig]: ChaosConfig[K] } = {};
  const errorProbability = number('CHAOS_ERROR_PROBABILITY');
  if (errorProbability !== undefined) config.errorProbability = errorProbability;
  const corrupt = number('CHAOS_CORRUPT_TOOL_CALL_PROBABILITY');
  if (corrupt !== undefined) config.corruptToolCallProbability = corrupt;
  const retryAfter = number('CHAOS_RETRY_AFTER');
  if (retryAfter !== undefined) config.retryAfterSeconds = retryAfter;
  const seed = number('CHAOS_SEED');
  if (seed !== undefined) config.seed = seed;

  const types = env['CHAOS_ERROR_TYPES']?.trim();
  if (types) {
    const faults: Partial<Record<ChaosFault, number>> = {};
    for (const token of types.split(',')) {
      const fault = token.trim().toLowerCase();
      if (fault === '') continue;
      if (!(CHAOS_FAULTS as readonly string[]).includes(fault)) {
        throw new RangeError(`CHAOS_ERROR_TYPES: unknown fault '${token.trim()}' (known: ${CHAOS_FAULTS.join(', ')})`);
      }
      faults[fault as ChaosFault] = (faults[fault as ChaosFault] ?? 0) + 1;
    }
    config.faults = faults;
  }
  return config;
}

function probability(value: number, field: string): number {
  if (!(value >= 0 && value <= 1)) throw new RangeError(`ChaosConfig.${field} must be between 0 and 1, got ${value}`);
  return value;
}

function nonNegative(value: number, field: string): number {
  if (!(Number.isFinite(value) && value >= 0)) throw new RangeError(`ChaosConfig.${field} must be a finite number >= 0, got ${value}`);
  return value;
}
