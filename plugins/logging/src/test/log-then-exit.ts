/**
 * Child process of the file-destination tests: logs `STEPS` steps (three lines each, at `debug`) to
 * the file at `argv[2]`, disposes the kernel or flushes the logger
 * (`argv[3]`: `dispose` or `flush`), then exits at once with `process.exit` — what a short script does.
 */
import { textPart } from '@kosong/core';
import { MockChatProvider } from '@kosong/provider-echo';
import { loggingPlugin, StepLogger } from '../index.js';
import { kernelWith, providerPlugin } from './support.js';

const [path, mode] = process.argv.slice(2);
if (path === undefined || (mode !== 'dispose' && mode !== 'flush')) throw new Error('usage: log-then-exit <file> dispose|flush');

const STEPS = 20;
const logs = new StepLogger({ destination: path, level: 'debug' });
const provider = new MockChatProvider([textPart('hello')]);
const kernel = await kernelWith(providerPlugin(provider), mode === 'dispose' ? loggingPlugin({ destination: path, level: 'debug' }) : loggingPlugin(logs));
const history = [{ role: 'user' as const, content: [textPart('go')] }];
for (let i = 0; i < STEPS; i++) {
  const result = await kernel.runner().step({ systemPrompt: 'hi', history });
  await result.toolResults();
}
if (mode === 'dispose') {
  await kernel.dispose();
} else {
  await logs.flush();
}
process.exit(0);
