/**
 * The `gemini` suite's server, in a process of its own so that serving the stream does not run on
 * the measured process's thread: a {@link GeminiServer} on 127.0.0.1 answering every request with
 * the workload. Started with an IPC channel (`fork`); sends `{ url }` once listening, and exits when
 * the channel closes (its parent is gone).
 *
 * @module
 */
import { GeminiServer } from '@kosong/provider-google/testing';
import { workloadEvents } from './workload.js';

const server = await GeminiServer.start({ defaultReply: { type: 'stream', events: workloadEvents() } });
process.on('disconnect', () => void server.close().then(() => process.exit(0)));
process.send?.({ url: server.url });
