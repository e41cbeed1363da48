/**
 * The `openai-responses` suite's server, in a process of its own: a {@link ResponsesServer} on
 * 127.0.0.1 that answers every request with the workload (encoded once, written in one go),
 * printing its URL and exiting with the process that started it (see `startServerProcess`).
 *
 * @module
 */
import { encodeResponsesStream, ResponsesServer } from '@kosong/provider-openai/testing';
import { serveUntilParentExits } from '../../server-process.js';
import { workloadReply } from './workload.js';

const body = Buffer.from(encodeResponsesStream(workloadReply()));
const server = await ResponsesServer.start({
  defaultReply: (_request, response) => {
    response.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    response.end(body);
  },
});
serveUntilParentExits(server.baseURL, () => server.close());
