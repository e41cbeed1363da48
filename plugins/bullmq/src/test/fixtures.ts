import { fileURLToPath } from 'node:url';

/** The compiled fixture `name` (e.g. `tool-worker-main.js`). */
export const fixture = (name: string): string => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));
