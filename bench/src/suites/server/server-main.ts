/**
 * The server of the `server` suite, in a process of its own: `@kosong/server` (Fastify) on
 * 127.0.0.1 with the {@link PausingProvider}, one API key for the tenant. Two routes of the bench's
 * own control the gate: `POST /bench/hold?chats=N` measures the memory in use (after full
 * collections) and closes the gate for the next N turns; `GET /bench/held` answers once N turns
 * wait at it, with the memory held per open stream, then opens it; `GET /bench/cpu` answers with
 * the process's CPU time so far (user + system).
 *
 * Started with `--expose-gc` by {@link startServerProcess}; exits when its stdin closes.
 *
 * @module
 */
import { apiKeyAuth, createServer, hashApiKey, memorySessions } from '@kosong/server';
import { serveUntilParentExits } from '../../server-process.js';
import { benchKernel, Gate, settledMemory } from './workload.js';

/** The API key of the bench's tenant. */
const API_KEY = process.env.KOSONG_BENCH_API_KEY ?? '';
if (API_KEY.length < 16) throw new Error('KOSONG_BENCH_API_KEY must be set (16 characters or more)');

const gate = new Gate();
const kernel = await benchKernel(gate);
const app = createServer({
  kernel,
  auth: apiKeyAuth([{ sha256: hashApiKey(API_KEY), tenant: 'acme' }]),
  sessions: memorySessions(),
  agent: { systemPrompt: 'You are a benchmark.', maxSteps: 1 },
});

let hold: { readonly chats: number; readonly before: number; readonly allWaiting: Promise<void> } | undefined;

app.post('/bench/hold', async (request) => {
  const chats = Number((request.query as { chats?: string }).chats);
  if (!Number.isInteger(chats) || chats < 1) throw new Error('chats must be a positive integer');
  const before = await settledMemory();
  hold = { chats, before, allWaiting: gate.close(chats) };
  return { ok: true };
});

app.get('/bench/cpu', () => {
  const { user, system } = process.cpuUsage();
  return { cpuMs: (user + system) / 1000 };
});

app.get('/bench/held', async () => {
  if (hold === undefined) throw new Error('POST /bench/hold first');
  const { chats, before, allWaiting } = hold;
  hold = undefined;
  await allWaiting;
  const after = await settledMemory();
  gate.open();
  return { chats, memoryPerStreamBytes: (after - before) / chats, rssMb: process.memoryUsage().rss / 1024 / 1024 };
});

const url = await app.listen({ host: '127.0.0.1', port: 0 });
serveUntilParentExits(url, () => app.close());
