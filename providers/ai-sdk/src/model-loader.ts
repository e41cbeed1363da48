/**
 * An AI SDK model named by `<package>:<model-id>` (e.g. `@ai-sdk/mistral:mistral-large-latest`),
 * loaded from the provider package installed where the program runs: what the `kosong` CLI's
 * `--provider ai-sdk --model …` does.
 *
 * @module
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

import { ChatProviderError, sameOriginRedirects } from '@kosong/core/provider-kit';

import { aiSdkErrorConverter, isAiSdkError } from './convert-error.js';
import type { AiSdkLanguageModel } from './language-model.js';

/** A model named by `<package>:<model-id>`. */
export interface ModelSpec {
  /** The provider package, e.g. `@ai-sdk/mistral`. */
  readonly packageName: string;
  /** The package's id of the model, e.g. `mistral-large-latest` (it may hold `:`, as Bedrock's ids do). */
  readonly modelId: string;
}

/** Options of {@link loadAiSdkModel}. */
export interface LoadModelOptions {
  /** Where the package is looked for first (its `node_modules`, then those of its parents); default the working directory. */
  readonly cwd?: string;
  /**
   * Settings given to the package's factory besides `fetch` (e.g. `{ baseURL, apiKey }`); without
   * them the package reads its own environment variables (`MISTRAL_API_KEY`, …).
   */
  readonly settings?: Readonly<Record<string, unknown>>;
  /** The `fetch` the package sends its requests with; default `fetch` following redirects only within an origin (`sameOriginRedirects`). */
  readonly fetch?: typeof fetch;
  /** Names the caller in errors; default `ai-sdk`. */
  readonly name?: string;
}

const PACKAGE_NAME = /^(?:@[a-z0-9-~][a-z0-9-._~]*\/)?[a-z0-9-~][a-z0-9-._~]*$/;

/**
 * `<package>:<model-id>` as its parts: the package is what comes before the first `:`.
 *
 * @throws {ChatProviderError} for a text without a package name, a `:` or a model id.
 */
export function parseModelSpec(text: string, name = 'ai-sdk'): ModelSpec {
  const colon = text.indexOf(':');
  const packageName = colon === -1 ? text : text.slice(0, colon);
  const modelId = colon === -1 ? '' : text.slice(colon + 1);
  if (!PACKAGE_NAME.test(packageName) || modelId === '') {
    throw new ChatProviderError(`${name}: the model must be named as <package>:<model-id>, e.g. @ai-sdk/mistral:mistral-large-latest (got ${JSON.stringify(text)})`);
  }
  return { packageName, modelId };
}

/**
 * The model `spec` names, from its package: the package is imported from the `node_modules` of
 * `cwd` (or of a parent), else as this package resolves it; its provider is made with the
 * package's factory (`createMistral`, …) given `fetch` (credentials never follow a redirect to
 * another origin) and `settings`, or is the package's default instance when it has no factory; the
 * model is `provider.languageModel(modelId)`. The key is checked at once where the package lets
 * its headers be read: a missing one is an error now, naming the variable, not at the first call.
 *
 * @throws {ChatProviderError} when the package is not installed (saying how to install it), exports
 * no AI SDK provider, or has no key.
 */
export async function loadAiSdkModel(spec: string | ModelSpec, options: LoadModelOptions = {}): Promise<AiSdkLanguageModel> {
  const name = options.name ?? 'ai-sdk';
  const { packageName, modelId } = typeof spec === 'string' ? parseModelSpec(spec, name) : spec;
  const exports = await importPackage(packageName, options.cwd ?? process.cwd(), name);
  const provider = providerOf(exports, packageName, { fetch: options.fetch ?? sameOriginRedirects((input, init) => fetch(input, init)), ...options.settings }, name);
  const model = provider.languageModel(modelId);
  await checkKey(model, name, packageName);
  return model as AiSdkLanguageModel;
}

/** What an AI SDK provider is, as far as the loader needs it. */
interface Provider {
  languageModel(modelId: string): unknown;
}

function isProvider(value: unknown): value is Provider {
  return (typeof value === 'function' || (typeof value === 'object' && value !== null)) && typeof (value as { languageModel?: unknown }).languageModel === 'function';
}

/** The provider of a package: made by its factory, or its default instance. */
function providerOf(exports: Readonly<Record<string, unknown>>, packageName: string, settings: Readonly<Record<string, unknown>>, name: string): Provider {
  const instances = Object.entries(exports).filter(([key, value]) => !key.startsWith('create') && isProvider(value));
  const factories = Object.entries(exports).filter(([key, value]) => /^create[A-Z]/.test(key) && typeof value === 'function');
  const [instanceName, instance] = instances.length === 1 ? instances[0]! : [undefined, undefined];
  // `mistral` is made by `createMistral`, `openai` by `createOpenAI`; a package with one factory has that one
  const factory =
    factories.find(([key]) => instanceName !== undefined && key.toLowerCase() === `create${instanceName.toLowerCase()}`)?.[1] ?? (factories.length === 1 ? factories[0]![1] : undefined);
  if (factory !== undefined) {
    const made = (factory as (settings: unknown) => unknown)(settings);
    if (isProvider(made)) return made;
  }
  if (instance !== undefined) return instance as Provider;
  throw new ChatProviderError(`${name}: ${packageName} exports no AI SDK provider (a factory such as createMistral, or an instance such as mistral, with a languageModel method)`);
}

/** The package as imported from `cwd`'s `node_modules` (or a parent's), else as this package resolves it. */
async function importPackage(packageName: string, cwd: string, name: string): Promise<Readonly<Record<string, unknown>>> {
  const installed = findInstalled(packageName, cwd);
  try {
    return (await import(installed === undefined ? packageName : pathToFileURL(installed).href)) as Record<string, unknown>;
  } catch (error) {
    if (installed === undefined && (error as { code?: unknown }).code === 'ERR_MODULE_NOT_FOUND' && String((error as Error).message).includes(packageName)) {
      throw new ChatProviderError(
        `${name}: the AI SDK provider package ${packageName} is not installed. Install it where you run kosong: npm install ${packageName} (for a global kosong: npm install -g ${packageName})`,
      );
    }
    throw new ChatProviderError(`${name}: ${packageName} could not be loaded: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}

/** The entry file of the package installed in the `node_modules` of `from` or of a parent, for `import`. */
function findInstalled(packageName: string, from: string): string | undefined {
  for (let dir = from; ; dir = dirname(dir)) {
    const root = join(dir, 'node_modules', ...packageName.split('/'));
    const manifest = join(root, 'package.json');
    if (existsSync(manifest)) return join(root, entryOf(JSON.parse(readFileSync(manifest, 'utf8')) as Manifest));
    if (dirname(dir) === dir) return undefined;
  }
}

interface Manifest {
  readonly exports?: unknown;
  readonly module?: unknown;
  readonly main?: unknown;
}

/** The file `import` loads of a package: its `exports` for `.` under the `import`, `node` or `default` condition, else `module` / `main`. */
function entryOf(manifest: Manifest): string {
  const exports = manifest.exports;
  const root = typeof exports === 'object' && exports !== null && !Array.isArray(exports) && '.' in exports ? (exports as Record<string, unknown>)['.'] : exports;
  const resolved = conditional(root);
  if (resolved !== undefined) return resolved;
  if (typeof manifest.module === 'string') return manifest.module;
  return typeof manifest.main === 'string' ? manifest.main : 'index.js';
}

function conditional(target: unknown): string | undefined {
  if (typeof target === 'string') return target;
  if (Array.isArray(target)) return target.map(conditional).find((found) => found !== undefined);
  if (typeof target !== 'object' || target === null) return undefined;
  const conditions = target as Record<string, unknown>;
  for (const condition of ['import', 'node', 'default']) {
    const found = condition in conditions ? conditional(conditions[condition]) : undefined;
    if (found !== undefined) return found;
  }
  return undefined;
}

/** Reads the model's headers where its package lets them be read (`config.headers`): a missing key throws there. */
async function checkKey(model: unknown, name: string, packageName: string): Promise<void> {
  const headers = (model as { config?: { headers?: unknown } } | null)?.config?.headers;
  if (typeof headers !== 'function') return;
  try {
    await (headers as () => unknown)();
  } catch (error) {
    if (isAiSdkError(error, 'LoadAPIKeyError')) throw aiSdkErrorConverter(`${name} (${packageName})`)(error, []);
  }
}
