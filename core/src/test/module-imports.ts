import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/**
 * Every module the compiled file `entry` imports, transitively, following its static imports (and
 * `import('…')` of a literal): core's files (absolute) and bare specifiers. What a module loads
 * through `createRequire` on first use (zod, inversify) is not followed: it is not loaded by importing.
 */
export function importsOf(entry: string): { files: Set<string>; bare: Set<string> } {
  const files = new Set<string>();
  const bare = new Set<string>();
  const visit = (file: string): void => {
    if (files.has(file)) return;
    files.add(file);
    const source = readFileSync(file, 'utf8');
    for (const match of source.matchAll(/^\s*(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/gm)) {
      const specifier = match[1] ?? match[2]!;
      if (specifier.startsWith('.')) visit(resolve(dirname(file), specifier));
      else bare.add(specifier);
    }
  };
  visit(entry);
  return { files, bare };
}
