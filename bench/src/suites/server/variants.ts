/**
 * Variants of the `server` suite: {@link CHATS} agent turns at once, bare (`kernel.agent()` in this
 * process) and through `@kosong/server` over HTTP on loopback (the server in a process of its own,
 * the chats sent by undici's `Pool` from this one), each timed to its first text delta and to its end.
 *
 * @module
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Client, Pool } from 'undici';
import type { PreparedVariant } from '../../harness.js';
import { startServerProcess } from '../../server-process.js';
import { quantile } from '../../stats.js';
import { benchKernel, CHATS, Gate, settledMemory, TENANT, TURN_TEXT } from './workload.js';

/** What one run saw: each chat's time to its first text delta, its text, and the memory held per open turn. */
interface Output {
  readonly firstDeltaMs: readonly number[];
  readonly texts: readonly string[];
  readonly memoryPerStreamBytes: number;
  /** CPU time (user + system) of the process running the turns, from the start of the run to its end, in ms. */
  readonly turnsCpuMs: number;
}

function verify(label: string, { firstDeltaMs, texts }: Output): void {
  if (firstDeltaMs.length !== CHATS || texts.length !== CHATS) throw new Error(`${label}: ${firstDeltaMs.length} first deltas and ${texts.length} texts for ${CHATS} chats`);
  const wrong = texts.findIndex((text) => text !== TURN_TEXT);
  if (wrong >= 0) throw new Error(`${label}: chat ${wrong} streamed ${JSON.stringify(texts[wrong]!.slice(0, 200))}`);
}

function measure({ firstDeltaMs, memoryPerStreamBytes, turnsCpuMs }: Output): Record<string, number> {
  return {
    firstDeltaP50Ms: quantile(firstDeltaMs, 0.5),
    firstDeltaP99Ms: quantile(firstDeltaMs, 0.99),
    memoryPerStreamKb: memoryPerStreamBytes / 1024,
    cpuMsPerChat: turnsCpuMs / CHATS,
  };
}

function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** `kernel.agent({ tenant }).run()` × {@link CHATS} at once, in this process: the floor. */
export async function prepareBareTurns(): Promise<PreparedVariant<Output>> {
  const gate = new Gate();
  const kernel = await benchKernel(gate);
  return {
    async run() {
      const before = await settledMemory();
      const allWaiting = gate.close(CHATS);
      const cpuBefore = cpuMs();
      const start = performance.now();
      const firstDeltaMs: number[] = new Array<number>(CHATS);
      const turns = Array.from({ length: CHATS }, async (_, i) => {
        const agent = kernel.agent({ tenant: TENANT, systemPrompt: 'You are a benchmark.', maxSteps: 1 });
        let text = '';
        await agent.run('hello', {
          onEvent(event) {
            if (event.type !== 'part' || event.part.type !== 'text') return;
            if (text === '') firstDeltaMs[i] = performance.now() - start;
            text += event.part.text;
          },
        });
        return text;
      });
      await allWaiting;
      const memoryPerStreamBytes = ((await settledMemory()) - before) / CHATS;
      gate.open();
      const texts = await Promise.all(turns);
      // The collections of the memory measurement are in it too, as they are in the server's.
      return { firstDeltaMs, texts, memoryPerStreamBytes, turnsCpuMs: cpuMs() - cpuBefore };
    },
    verify: (output) => verify('bare-turn', output),
    measure,
  };
}

const SERVER_MAIN = fileURLToPath(new URL('./server-main.js', import.meta.url));

/**
 * {@link CHATS} `POST /api/chat` at once to `@kosong/server` in its own process, over as many
 * keep-alive connections (undici `Pool`), each response read as it streams: the time to the
 * first `text-delta` chunk from the start of the run, the text of the `text-delta`s, and the
 * server's own measurement of the memory each open stream holds.
 */
export async function prepareServerChats(): Promise<PreparedVariant<Output>> {
  const apiKey = randomBytes(24).toString('hex');
  const url = await startServerProcess(SERVER_MAIN, { nodeArgs: ['--expose-gc'], env: { KOSONG_BENCH_API_KEY: apiKey } });
  const pool = new Pool(url, { connections: CHATS, pipelining: 1, keepAliveTimeout: 60_000 });
  // The bench's own requests on a connection of their own: the pool's are all busy with the held chats.
  const control = new Client(url);
  const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
  const serverCpuMs = async (): Promise<number> => ((await (await control.request({ path: '/bench/cpu', method: 'GET' })).body.json()) as { cpuMs: number }).cpuMs;
  return {
    async run() {
      const hold = await control.request({ path: `/bench/hold?chats=${CHATS}`, method: 'POST' });
      if (hold.statusCode !== 200) throw new Error(`server: /bench/hold answered ${hold.statusCode}: ${await hold.body.text()}`);
      await hold.body.dump();
      const cpuBefore = await serverCpuMs();
      const start = performance.now();
      const firstDeltaMs: number[] = new Array<number>(CHATS);
      const chats = Array.from({ length: CHATS }, async (_, i) => {
        const body = JSON.stringify({ id: randomUUID(), trigger: 'submit-message', messages: [{ id: randomUUID(), role: 'user', parts: [{ type: 'text', text: 'hello' }] }] });
        const response = await pool.request({ path: '/api/chat', method: 'POST', headers, body });
        if (response.statusCode !== 200) throw new Error(`server: chat ${i} answered ${response.statusCode}: ${await response.body.text()}`);
        response.body.setEncoding('utf8');
        let pending = '';
        let text = '';
        for await (const chunk of response.body as AsyncIterable<string>) {
          pending += chunk;
          let end: number;
          while ((end = pending.indexOf('\n\n')) >= 0) {
            const frame = pending.slice(0, end);
            pending = pending.slice(end + 2);
            if (!frame.startsWith('data: ') || frame === 'data: [DONE]') continue;
            const uiChunk = JSON.parse(frame.slice(6)) as { type: string; delta?: string };
            if (uiChunk.type !== 'text-delta') continue;
            if (text === '') firstDeltaMs[i] = performance.now() - start;
            text += uiChunk.delta ?? '';
          }
        }
        return text;
      });
      const held = await control.request({ path: '/bench/held', method: 'GET' });
      const { memoryPerStreamBytes } = (await held.body.json()) as { memoryPerStreamBytes: number };
      const texts = await Promise.all(chats);
      return { firstDeltaMs, texts, memoryPerStreamBytes, turnsCpuMs: (await serverCpuMs()) - cpuBefore };
    },
    verify: (output) => verify('server', output),
    measure,
  };
}
