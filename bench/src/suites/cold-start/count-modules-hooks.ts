/**
 * Module-loading hooks of the cold-start suite's counting pass (see `count-modules.ts`): one `esm`
 * line per ES module loaded from a file, appended to the counting file.
 *
 * @module
 */
import { appendFileSync } from 'node:fs';

let file: string | undefined;

/** Receives the counting file from `register`. */
export function initialize(data: { readonly file: string }): void {
  file = data.file;
}

type NextLoad = (url: string, context: { readonly format?: string | null | undefined }) => Promise<{ readonly format?: string | null | undefined }>;

/** Counts each ES module loaded from a file. */
export async function load(url: string, context: { readonly format?: string | null | undefined }, nextLoad: NextLoad): Promise<unknown> {
  const loaded = await nextLoad(url, context);
  if (file && url.startsWith('file:') && loaded.format === 'module') appendFileSync(file, `esm ${url}\n`);
  return loaded;
}
