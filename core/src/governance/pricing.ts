/**
 * What a model's tokens cost: the kernel's price table first, then the model catalog of the
 * `tokenlens` package (models.dev data shipped in the package: read from disk, never fetched).
 *
 * @module
 */
import { createRequire } from 'node:module';
import type { TokenUsage } from '../provider/token-usage.js';

/**
 * A model's price in US dollars per million tokens. Cache reads and writes without a price of
 * their own cost what input costs.
 */
export interface ModelPrice {
  /** Uncached input, per million tokens. */
  readonly input: number;
  /** Output (reasoning included), per million tokens. */
  readonly output: number;
  /** Input read from the prompt cache, per million tokens; default `input`. */
  readonly cacheRead?: number;
  /** Input written to the prompt cache, per million tokens; default `input`. */
  readonly cacheWrite?: number;
}

/**
 * Prices by model, over the catalog's: keys are `'<provider>/<model>'` (the `ChatProvider`'s
 * `name` and `modelName`, e.g. `'openai/gpt-4o'`) or a bare model name (`'gpt-4o'`, any provider).
 */
export type PriceTable = Readonly<Record<string, ModelPrice>>;

/**
 * The prices a kernel's steps are costed with (its `KernelOptions.prices`, then the catalog): a
 * plugin that reports cost injects it (`@inject(UsagePricing) @optional()`), so that its figures
 * are the usage ledger's.
 */
export interface UsagePricing {
  /** The price of `model` of `provider` (a `ChatProvider`'s `name` and `modelName`); `undefined`: unknown. */
  priceOf(provider: string, model: string): ModelPrice | undefined;
}

/** Service identifier of the kernel's {@link UsagePricing}. */
export const UsagePricing: unique symbol = Symbol.for('kosong.UsagePricing');

/** The price of one token, in US dollars, from a per-million price. */
const PER_TOKEN = 1e-6;

/** A step's cost in US dollars. */
export function costOf(usage: TokenUsage, price: ModelPrice): number {
  const { input, output, cacheRead = input, cacheWrite = input } = price;
  return (usage.inputOther * input + usage.inputCacheRead * cacheRead + usage.inputCacheCreation * cacheWrite + usage.output * output) * PER_TOKEN;
}

/**
 * Checks a price table and returns a frozen copy.
 *
 * @throws TypeError for a table that is not an object, an empty key, a price that is not an
 * object, an unknown field, or a price that is not a finite number ≥ 0 (at most 10⁶ per million).
 */
export function validatePriceTable(owner: string, table: unknown): PriceTable {
  if (table === undefined) return EMPTY;
  if (typeof table !== 'object' || table === null || Array.isArray(table)) throw new TypeError(`${owner}: prices must be an object of model → price`);
  const checked: Record<string, ModelPrice> = {};
  for (const [model, price] of Object.entries(table)) {
    if (model === '') throw new TypeError(`${owner}: prices: a model name must not be empty`);
    if (typeof price !== 'object' || price === null || Array.isArray(price)) throw new TypeError(`${owner}: prices["${model}"] must be an object { input, output, cacheRead?, cacheWrite? }`);
    const fields = price as Record<string, unknown>;
    for (const key of Object.keys(fields)) {
      if (!PRICE_FIELDS.has(key)) throw new TypeError(`${owner}: prices["${model}"]: unknown field "${key}" (its fields: ${[...PRICE_FIELDS].join(', ')})`);
    }
    for (const key of PRICE_FIELDS) {
      const value = fields[key];
      if (value === undefined && (key === 'cacheRead' || key === 'cacheWrite')) continue;
      if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > 1e6) {
        throw new TypeError(`${owner}: prices["${model}"].${key} must be a finite number of US dollars per million tokens, from 0 to 1000000 (got ${String(value)})`);
      }
    }
    checked[model] = Object.freeze({ ...(price as ModelPrice) });
  }
  return Object.freeze(checked);
}

const PRICE_FIELDS: ReadonlySet<string> = new Set(['input', 'output', 'cacheRead', 'cacheWrite']);
const EMPTY: PriceTable = Object.freeze({});

/** The catalog's provider for a kosong provider name, where they differ. */
const CATALOG_PROVIDER: Readonly<Record<string, string>> = {
  'openai-responses': 'openai',
  kimi: 'moonshotai',
  google_genai: 'google',
  gemini: 'google',
  vertex: 'google-vertex',
  bedrock: 'amazon-bedrock',
};

/** The providers of tokenlens's catalog (`tokenlens/providers/<key>`), as shipped in tokenlens 1.3. */
const CATALOG_PROVIDERS: ReadonlySet<string> = new Set(
  (
    'alibaba alibaba-cn amazon-bedrock anthropic azure baseten cerebras chutes cloudflare-workers-ai deepinfra deepseek ' +
    'fastrouter fireworks-ai github-copilot github-models google google-vertex google-vertex-anthropic groq huggingface ' +
    'inception inference llama lmstudio mistral modelscope moonshotai moonshotai-cn morph nvidia openai opencode openrouter ' +
    'perplexity requesty submodel synthetic togetherai upstage v0 venice vercel wandb xai zai zai-coding-plan zhipuai'
  ).split(' '),
);

/** One provider's entry in the catalog (the fields read here). */
interface CatalogProvider {
  readonly models: Readonly<Record<string, { readonly cost?: { readonly input?: number; readonly output?: number; readonly cache_read?: number; readonly cache_write?: number } }>>;
}

/**
 * Prices of models: the table given first (`'<provider>/<model>'`, then the bare model name), then
 * tokenlens's catalog, under the catalog's provider for the step's provider (`kimi` →
 * `moonshotai`, `google_genai` → `google`, …), or under the prefix of a model named
 * `'<provider>/<model>'` or `'<provider>:<model>'`. A provider module of the catalog is read from
 * disk the first time one of its models is priced (a few KB, synchronously); nothing is fetched.
 * Each answer is cached per provider and model. A model found nowhere has no price (`undefined`):
 * its cost is unknown, never 0.
 */
export class Pricing implements UsagePricing {
  readonly #table: PriceTable;
  readonly #cache = new Map<string, Map<string, ModelPrice | null>>();
  readonly #catalogs = new Map<string, CatalogProvider | null>();

  constructor(table: PriceTable = EMPTY) {
    this.#table = table;
  }

  /** The price of `model` of `provider` (a `ChatProvider`'s `name` and `modelName`), if known. */
  priceOf(provider: string, model: string): ModelPrice | undefined {
    let models = this.#cache.get(provider);
    if (models === undefined) this.#cache.set(provider, (models = new Map()));
    let price = models.get(model);
    if (price === undefined) models.set(model, (price = this.#lookUp(provider, model) ?? null));
    return price ?? undefined;
  }

  #lookUp(provider: string, model: string): ModelPrice | undefined {
    const own = this.#table[`${provider}/${model}`] ?? this.#table[model];
    if (own) return own;
    const prefixed = /^([a-z0-9-]+)[/:](.+)$/.exec(model);
    if (prefixed && CATALOG_PROVIDERS.has(prefixed[1]!)) {
      const price = this.#fromCatalog(prefixed[1]!, prefixed[2]!);
      if (price) return price;
    }
    return this.#fromCatalog(CATALOG_PROVIDER[provider] ?? provider, model);
  }

  #fromCatalog(key: string, model: string): ModelPrice | undefined {
    if (!CATALOG_PROVIDERS.has(key)) return undefined;
    let catalog = this.#catalogs.get(key);
    if (catalog === undefined) this.#catalogs.set(key, (catalog = loadCatalog(key) ?? null));
    const cost = catalog?.models[model]?.cost;
    if (cost === undefined || typeof cost.input !== 'number' || typeof cost.output !== 'number') return undefined;
    return Object.freeze({
      input: cost.input,
      output: cost.output,
      ...(typeof cost.cache_read === 'number' && { cacheRead: cost.cache_read }),
      ...(typeof cost.cache_write === 'number' && { cacheWrite: cost.cache_write }),
    });
  }
}

/** Reads one provider of tokenlens's catalog (an ES module, loaded with `require`: Node ≥ 20.19). */
function loadCatalog(key: string): CatalogProvider | undefined {
  try {
    // The module exports the provider as `<key>Models` (`alibaba_cnModels` for `alibaba-cn`).
    const module = createRequire(import.meta.url)(`tokenlens/providers/${key}`) as Readonly<Record<string, CatalogProvider | undefined>>;
    const provider = module[`${key.replace(/-/g, '_')}Models`];
    return typeof provider?.models === 'object' ? provider : undefined;
  } catch {
    return undefined; // not in this version of the catalog: no price
  }
}
