import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A free TCP port on 127.0.0.1 (the OS picks it; redis-server binds it right after). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** A real `redis-server` (Debian's, or `$REDIS_SERVER`) on a free port of 127.0.0.1, without persistence, for one spec file. */
export class TestRedis {
  private constructor(
    readonly port: number,
    private readonly dir: string,
    private readonly child: ChildProcess,
  ) {}

  /** `redis://127.0.0.1:<port>` */
  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Starts one (a few ports are tried if one is taken meanwhile). */
  static async start(): Promise<TestRedis> {
    const dir = await mkdtemp(join(tmpdir(), 'kosong-server-redis-'));
    let lastError: unknown;
    for (let attempt = 0; attempt < 5; attempt++) {
      const port = await freePort();
      const child = spawn(process.env.REDIS_SERVER ?? 'redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'pipe'] });
      try {
        await new Promise<void>((resolve, reject) => {
          let output = '';
          const timer = setTimeout(() => reject(new Error(`redis-server did not start within 20 s:\n${output}`)), 20_000);
          const onData = (chunk: Buffer): void => {
            output += chunk.toString();
            if (output.includes('Ready to accept connections')) {
              clearTimeout(timer);
              resolve();
            }
          };
          child.stdout!.on('data', onData);
          child.stderr!.on('data', onData);
          child.once('error', (error) => (clearTimeout(timer), reject(new Error(`cannot run redis-server (apt-get install -y redis-server): ${error.message}`))));
          child.once('exit', (code) => (clearTimeout(timer), reject(new Error(`redis-server exited with ${code}:\n${output}`))));
        });
        child.removeAllListeners('exit');
        child.stdout!.removeAllListeners('data').resume();
        child.stderr!.removeAllListeners('data').resume();
        return new TestRedis(port, dir, child);
      } catch (error) {
        child.kill('SIGKILL');
        lastError = error;
      }
    }
    await rm(dir, { recursive: true, force: true });
    throw lastError;
  }

  /** Stops it and removes its folder. */
  async stop(): Promise<void> {
    if (this.child.exitCode === null) {
      const exited = new Promise((resolve) => this.child.once('exit', resolve));
      this.child.kill('SIGKILL');
      await exited;
    }
    await rm(this.dir, { recursive: true, force: true });
  }
}
