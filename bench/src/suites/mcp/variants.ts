/**
 * Variants of the `mcp` suite: the SDK client bare, and `McpToolset`, each calling server-everything's
 * `echo` over stdio.
 *
 * @module
 */
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { toolCall, type ToolReturnValue } from '@kosong/core';
import { McpToolset, type McpStdioServerConfig } from '@kosong/toolset-mcp';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { PreparedVariant } from '../../harness.js';

/** Calls per timed run. */
export const CALLS = 200;

/** server-everything's entry point, run as `node <it> stdio`. */
const EVERYTHING = join(dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/package.json')), 'dist', 'index.js');

const SERVER: McpStdioServerConfig = { type: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'], stderr: 'ignore' };

/** The message of call `i`. */
const message = (i: number): string => `round trip ${i}`;

function check(texts: readonly string[]): void {
  if (texts.length !== CALLS) throw new Error(`expected ${CALLS} results, got ${texts.length}`);
  texts.forEach((text, i) => {
    if (text !== `Echo: ${message(i)}`) throw new Error(`call ${i}: unexpected result ${JSON.stringify(text)}`);
  });
}

/** The SDK's `Client` over `StdioClientTransport`, `callTool` one call after the other: the floor. */
export async function prepareSdk(): Promise<PreparedVariant<string[]>> {
  const client = new Client({ name: 'bench', version: '0.0.0' });
  await client.connect(new StdioClientTransport({ command: SERVER.command, args: [...SERVER.args!], stderr: 'ignore' }));
  killChildrenOnExit();
  return {
    async run() {
      const texts: string[] = [];
      for (let i = 0; i < CALLS; i++) {
        const result = await client.callTool({ name: 'echo', arguments: { message: message(i) } });
        const [first] = result.content as { type: string; text?: string }[];
        texts.push(first?.text ?? '');
      }
      return texts;
    },
    verify: check,
  };
}

/** `McpToolset.handle` one call after the other, as a step hands it the model's calls. */
export async function prepareToolset(): Promise<PreparedVariant<string[]>> {
  const toolset = await McpToolset.connect({ name: 'everything', server: SERVER });
  killChildrenOnExit();
  const signal = new AbortController().signal;
  const calls = Array.from({ length: CALLS }, (_, i) => toolCall(`call-${i}`, 'echo', JSON.stringify({ message: message(i) })));
  return {
    async run() {
      const texts: string[] = [];
      for (const call of calls) {
        const result = await toolset.handle(call, { signal, toolCall: call, stepId: 'bench' });
        texts.push(textOf(result.returnValue));
      }
      return texts;
    },
    verify: check,
  };
}

/**
 * The measuring process exits at once when it is done (`process.exit`): the server processes it
 * started (its children) are killed then, so that none outlives the measurement.
 */
function killChildrenOnExit(): void {
  process.once('exit', () => {
    let listing: string;
    try {
      listing = execFileSync('ps', ['-o', 'pid=', '--ppid', String(process.pid)], { encoding: 'utf8' });
    } catch {
      return; // no children (ps exits with 1), or no ps
    }
    for (const pid of listing.split('\n').map((line) => Number.parseInt(line.trim(), 10)).filter((n) => n > 0)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    }
  });
}

function textOf(value: ToolReturnValue): string {
  if (value.isError) throw new Error(`the call failed: ${value.message}`);
  if (typeof value.output === 'string') return value.output;
  return value.output.map((part) => (part.type === 'text' ? part.text : '')).join('');
}
