import type { ProviderPluginFactory } from '@kosong/core';
import { readdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { demoPlugin } from './demo.js';

const demo: ProviderPluginFactory = {
  name: 'demo',
  description: 'offline: a scripted model that tours the working directory with the built-in tools (default)',
  create: demoPlugin,
};

/**
 * Every provider the CLI can offer: the built-in demo, plus the `providerPlugins` of every installed
 * `@kosong/provider-*` package (found next to the CLI), so a new provider package plugs in without
 * a change here.
 */
export async function providerCatalog(): Promise<ProviderPluginFactory[]> {
  const catalog = [demo];
  for (const name of await installedProviderPackages()) {
    let module: { providerPlugins?: unknown };
    try {
      module = (await import(name)) as { providerPlugins?: unknown };
    } catch {
      continue; // a package that does not load offers nothing; selecting it says so
    }
    if (!Array.isArray(module.providerPlugins)) continue;
    for (const entry of module.providerPlugins as ProviderPluginFactory[]) {
      if (!catalog.some((known) => known.name === entry.name)) catalog.push(entry);
    }
  }
  return catalog;
}

async function installedProviderPackages(): Promise<string[]> {
  const require = createRequire(import.meta.url);
  const found = new Set<string>();
  for (const dir of require.resolve.paths('@kosong/core') ?? []) {
    let entries: string[];
    try {
      entries = await readdir(join(dir, '@kosong'));
    } catch {
      continue;
    }
    for (const entry of entries) if (entry.startsWith('provider-')) found.add(`@kosong/${entry}`);
  }
  return [...found].sort();
}
