import type { ProviderPluginFactory } from '@kosong/core';
import { readdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';

/** A provider the CLI offers: its name and description at once, its plugin factory when chosen. */
export interface ProviderEntry {
  readonly name: string;
  readonly description: string;
  /** Loads the provider's package (its SDK with it) and returns its factory. */
  load(): Promise<ProviderPluginFactory>;
}

/** What a provider package may declare in its `package.json`, so it is listed without being loaded. */
interface ProviderManifest {
  readonly kosong?: { readonly providerPlugins?: readonly { readonly name?: unknown; readonly description?: unknown }[] };
}

/**
 * The first-party provider packages, each imported by a literal specifier: the bundler (see
 * `scripts/bundle.mjs`) then builds each into a file of its own that shares the bundle's
 * `@kosong/core`, loaded only when one of its providers is chosen. A package found installed that is
 * not listed here (a third party's) is imported from `node_modules`, with its own copy of the core.
 */
export const FIRST_PARTY_PROVIDERS: Readonly<Record<string, () => Promise<unknown>>> = {
  '@kosong/provider-ai-sdk': () => import('@kosong/provider-ai-sdk'),
  '@kosong/provider-anthropic': () => import('@kosong/provider-anthropic'),
  '@kosong/provider-echo': () => import('@kosong/provider-echo'),
  '@kosong/provider-google': () => import('@kosong/provider-google'),
  '@kosong/provider-openai': () => import('@kosong/provider-openai'),
};

/**
 * Providers whose package is not installed with the CLI, by the name they are chosen with: choosing
 * one that is not installed says what to install, not only that the name is unknown.
 */
const INSTALLABLE_PROVIDERS: Readonly<Record<string, { readonly package: string; readonly with: string }>> = {
  'ai-sdk': { package: '@kosong/provider-ai-sdk', with: ' with the AI SDK provider package of your model, e.g. npm install @kosong/provider-ai-sdk @ai-sdk/mistral' },
};

const demo: ProviderEntry = {
  name: 'demo',
  description: 'offline: a scripted model that tours the working directory with the built-in tools (default)',
  load: async () => ({ name: 'demo', description: demo.description, create: (await import('./demo.js')).demoPlugin }),
};

/**
 * Every provider the CLI can offer: the built-in demo, plus the `providerPlugins` of every installed
 * `@kosong/provider-*` package (found next to the CLI), so a new provider package plugs in without
 * a change here. A package that lists its providers in its `package.json` (`kosong.providerPlugins`:
 * name and description of each) is loaded only when one of them is chosen: loading every provider's
 * SDK made `kosong --help` take five times as long as Node's own start. A package without that list
 * is loaded to read its `providerPlugins`.
 */
export async function providerCatalog(): Promise<ProviderEntry[]> {
  const catalog = [demo];
  for (const { name, dir } of await installedProviderPackages()) {
    for (const entry of await providersOf(name, dir, FIRST_PARTY_PROVIDERS[name])) {
      if (!catalog.some((known) => known.name === entry.name)) catalog.push(entry);
    }
  }
  return catalog;
}

/**
 * The factory of the provider called `name`, its package loaded; `fail` is called (and must not
 * return) when there is no such provider or its package does not load.
 */
export async function chosenProvider(name: string, fail: (message: string) => never): Promise<ProviderPluginFactory> {
  const catalog = await providerCatalog();
  const entry = catalog.find((candidate) => candidate.name === name);
  const install = INSTALLABLE_PROVIDERS[name];
  if (!entry && install !== undefined) {
    fail(`the provider "${name}" is in ${install.package}, which is not installed: install it${install.with} (for a global kosong: npm install -g)`);
  }
  if (!entry) fail(`unknown provider "${name}"; available: ${catalog.map((e) => e.name).join(', ')}`);
  try {
    return await entry.load();
  } catch (error) {
    fail(`the provider "${name}" could not be loaded: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/**
 * The providers of one package (installed in `dir`, imported as `specifier`, or by `importer` when
 * given): from its manifest when it lists them, else from its loaded module.
 */
export async function providersOf(specifier: string, dir: string, importer: () => Promise<unknown> = () => import(specifier)): Promise<ProviderEntry[]> {
  const load = async (): Promise<readonly ProviderPluginFactory[]> => {
    const module = (await importer()) as { providerPlugins?: unknown };
    return Array.isArray(module.providerPlugins) ? (module.providerPlugins as ProviderPluginFactory[]) : [];
  };
  const listed = await listedProviders(dir);
  if (listed === undefined) {
    let factories: readonly ProviderPluginFactory[];
    try {
      factories = await load();
    } catch {
      return []; // a package that does not load offers nothing; selecting it says so
    }
    return factories.map((factory) => ({ name: factory.name, description: factory.description, load: () => Promise.resolve(factory) }));
  }
  return listed.map(({ name, description }) => ({
    name,
    description,
    async load() {
      const factory = (await load()).find((candidate) => candidate.name === name);
      if (!factory) throw new Error(`${specifier} lists the provider "${name}" in its package.json but does not export it in providerPlugins`);
      return factory;
    },
  }));
}

/** The providers a package lists in its `package.json`, or `undefined` when it lists none (or it cannot be read). */
async function listedProviders(dir: string): Promise<{ name: string; description: string }[] | undefined> {
  let manifest: ProviderManifest;
  try {
    manifest = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as ProviderManifest;
  } catch {
    return undefined;
  }
  const listed = manifest.kosong?.providerPlugins;
  if (!Array.isArray(listed)) return undefined;
  const entries = listed.flatMap((entry) =>
    typeof entry?.name === 'string' && typeof entry.description === 'string' ? [{ name: entry.name, description: entry.description }] : [],
  );
  return entries.length === listed.length ? entries : undefined; // a malformed list: load the package instead
}

async function installedProviderPackages(): Promise<{ name: string; dir: string }[]> {
  const require = createRequire(import.meta.url);
  const found = new Map<string, string>();
  for (const dir of require.resolve.paths('@kosong/core') ?? []) {
    let entries: string[];
    try {
      entries = await readdir(join(dir, '@kosong'));
    } catch {
      continue;
    }
    for (const entry of entries) {
      const name = `@kosong/${entry}`;
      if (entry.startsWith('provider-') && !found.has(name)) found.set(name, join(dir, '@kosong', entry));
    }
  }
  // By code point, not localeCompare: loading the locale data costs tens of milliseconds.
  return [...found].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([name, dir]) => ({ name, dir }));
}
