/**
 * The `anthropic` suite's server, in a process of its own so that serving the response costs the
 * measured process nothing: `node server-process.js` starts a {@link MessagesServer} on 127.0.0.1
 * that answers every request with the workload (encoded once, written in one go), prints its URL as
 * one line, and exits when its stdin closes (when the process that started it goes away).
 *
 * @module
 */
import { encodeEvent, MessagesServer } from '@kosong/provider-anthropic/testing';
import { workloadReply } from './workload.js';

const body = Buffer.from(workloadReply().events.map(encodeEvent).join(''));
const server = await MessagesServer.start({
  defaultReply: (_request, response) => {
    response.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    response.end(body);
  },
});
process.stdout.write(`${server.url}\n`);
process.stdin.resume();
process.stdin.on('end', () => void server.close().then(() => process.exit(0)));
process.stdin.on('error', () => process.exit(0));
