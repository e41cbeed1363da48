import { createInterface } from 'node:readline';
import type { AskUser } from './bash-approval.js';

/**
 * Asks on a terminal that nothing else reads (`kosong run`): each question reads one line, with the
 * terminal as it is (cooked: the terminal echoes the answer, Ctrl-C is a signal to the process, whose
 * handler stops the turn, and Ctrl-D ends the input). After the end of input every question gets
 * `undefined` at once.
 */
export function askOnTerminal(input: NodeJS.ReadStream, output: NodeJS.WriteStream): AskUser {
  return (question, signal) => {
    if (signal.aborted || input.readableEnded) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const rl = createInterface({ input, output, terminal: false });
      let done = false;
      const finish = (answer: string | undefined): void => {
        if (done) return;
        done = true;
        signal.removeEventListener('abort', onAbort);
        // Taken back or ended: the next output starts on a line of its own.
        if (answer === undefined) output.write('\n');
        rl.close();
        resolve(answer);
      };
      const onAbort = (): void => finish(undefined);
      signal.addEventListener('abort', onAbort, { once: true });
      rl.on('close', () => finish(undefined));
      rl.question(question, finish);
    });
  };
}
