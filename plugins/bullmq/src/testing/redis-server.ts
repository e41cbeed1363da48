import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Where the Redis server binary is (Debian's `redis-server`; override with `REDIS_SERVER`). */
const REDIS_SERVER = process.env.REDIS_SERVER ?? 'redis-server';

/** A free TCP port on 127.0.0.1 (the OS picks it; the server binds it right after). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** Options of {@link RedisServer.start}. */
export interface RedisServerOptions {
  /** Keep data across restarts (AOF, fsync always) instead of `--save "" --appendonly no`. */
  readonly persistent?: boolean;
}

/**
 * A real `redis-server` for one test file: its own port on 127.0.0.1 and its own temporary
 * directory, no persistence unless asked; stopped (and the directory removed) by {@link stop}.
 */
export class RedisServer {
  #process: ChildProcess | undefined;

  private constructor(
    readonly port: number,
    readonly dir: string,
    private readonly options: RedisServerOptions,
  ) {}

  /** `redis://127.0.0.1:PORT`. */
  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Starts a server on a free port (tries a few ports if one is taken meanwhile). */
  static async start(options: RedisServerOptions = {}): Promise<RedisServer> {
    const dir = await mkdtemp(join(tmpdir(), 'kosong-redis-'));
    let lastError: unknown;
    for (let attempt = 0; attempt < 5; attempt++) {
      const server = new RedisServer(await freePort(), dir, options);
      try {
        await server.launch();
        return server;
      } catch (error) {
        lastError = error;
      }
    }
    await rm(dir, { recursive: true, force: true });
    throw lastError;
  }

  /** Starts the server process (again, after {@link kill}: same port, same directory). */
  async launch(): Promise<void> {
    const persistence = this.options.persistent
      ? ['--appendonly', 'yes', '--appendfsync', 'always', '--save', '']
      : ['--save', '', '--appendonly', 'no'];
    const child = spawn(REDIS_SERVER, ['--port', String(this.port), '--bind', '127.0.0.1', '--dir', this.dir, ...persistence, '--loglevel', 'notice'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.#process = child;
    await new Promise<void>((resolve, reject) => {
      let output = '';
      const timer = setTimeout(() => fail(new Error(`redis-server did not start within 20 s:\n${output}`)), 20_000);
      const onData = (chunk: Buffer): void => {
        output += chunk.toString();
        if (output.includes('Ready to accept connections')) {
          clearTimeout(timer);
          resolve();
        }
      };
      const fail = (error: Error): void => {
        clearTimeout(timer);
        child.kill('SIGKILL');
        reject(error);
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', onData);
      child.once('error', (error) => fail(new Error(`cannot run ${REDIS_SERVER} (install it: apt-get install -y redis-server): ${error.message}`)));
      child.once('exit', (code) => fail(new Error(`redis-server exited with ${code}:\n${output}`)));
    });
    child.removeAllListeners('exit');
    child.stdout!.removeAllListeners('data');
    child.stderr!.removeAllListeners('data');
    child.stdout!.resume();
    child.stderr!.resume();
  }

  /** Kills the server at once (SIGKILL), as a crash would. */
  async kill(): Promise<void> {
    await this.#stopProcess('SIGKILL');
  }

  /** Freezes the server (SIGSTOP): its connections stay open, nothing answers, time goes on (its keys expire). */
  pause(): void {
    this.#process?.kill('SIGSTOP');
  }

  /** Lets a paused server go on (SIGCONT). */
  resume(): void {
    this.#process?.kill('SIGCONT');
  }

  /** Kills the server and removes its directory now, without waiting (for `process.on('exit')` handlers). */
  killSync(): void {
    this.#process?.kill('SIGKILL');
    this.#process = undefined;
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** Stops the server and removes its directory. */
  async stop(): Promise<void> {
    await this.#stopProcess('SIGTERM');
    await rm(this.dir, { recursive: true, force: true });
  }

  async #stopProcess(signal: NodeJS.Signals): Promise<void> {
    const child = this.#process;
    this.#process = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGCONT'); // a paused server would not act on SIGTERM
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill(signal);
    // A server that does not stop on SIGTERM within 10 s (a stuck save, say) is killed.
    const kill = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(kill);
  }
}
