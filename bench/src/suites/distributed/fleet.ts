import { fileURLToPath } from 'node:url';
import { RedisServer, TestProcess } from '@kosong/bullmq/testing';

const WORKER_SCRIPT = fileURLToPath(new URL('./worker-main.js', import.meta.url));

/** A redis-server and N worker processes for one benchmark process; killed when the process exits. */
export interface BenchFleet {
  readonly redis: RedisServer;
  readonly prefix: string;
  readonly workers: readonly TestProcess[];
}

/** Starts Redis and `workers` worker processes (untimed). Everything is killed on exit, even on `process.exit`. */
export async function startFleet(workers: number): Promise<BenchFleet> {
  const redis = await RedisServer.start();
  const prefix = 'bench';
  const started: TestProcess[] = [];
  process.once('exit', () => {
    for (const worker of started) worker.killSync();
    redis.killSync();
  });
  for (let i = 0; i < workers; i++) started.push(await TestProcess.start(WORKER_SCRIPT, [redis.url, prefix]));
  return { redis, prefix, workers: started };
}
