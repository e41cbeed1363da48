import { spawn, type ChildProcess } from 'node:child_process';

/** A worker process of a test or benchmark: started, waited for (`ready` on stdout), stopped or killed. */
export class TestProcess {
  readonly output: string[] = [];
  readonly exited: Promise<number | null>;

  private constructor(readonly child: ChildProcess) {
    // 'close', not 'exit': by then everything it wrote has been read (a crash's stack trace included).
    this.exited = new Promise((resolve) => child.once('close', (code) => resolve(code)));
  }

  /** Runs `node script ...args` and waits until it prints `ready`. */
  static async start(script: string, args: readonly string[], readyTimeoutMs = 30_000): Promise<TestProcess> {
    const child = spawn(process.execPath, [script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    const proc = new TestProcess(child);
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`${script} did not get ready:\n${proc.output.join('')}`));
      }, readyTimeoutMs);
      child.stdout!.on('data', (chunk: Buffer) => {
        proc.output.push(chunk.toString());
        if (proc.output.join('').includes('ready\n')) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.stderr!.on('data', (chunk: Buffer) => proc.output.push(chunk.toString()));
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`${script} exited with ${code} before it was ready:\n${proc.output.join('')}`));
      });
    });
    return proc;
  }

  get pid(): number {
    return this.child.pid!;
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** SIGKILL now, without waiting (for `process.on('exit')` handlers). */
  killSync(): void {
    if (this.alive) this.child.kill('SIGKILL');
  }

  /** SIGKILL: a crash. */
  async kill(): Promise<void> {
    if (this.alive) this.child.kill('SIGKILL');
    await this.exited;
  }

  /** SIGTERM, then SIGKILL if it has not exited within `graceMs`. */
  async stop(graceMs = 5_000): Promise<void> {
    if (!this.alive) return;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }
}
