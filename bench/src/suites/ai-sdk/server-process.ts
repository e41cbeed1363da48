/**
 * The `ai-sdk` suite's server, in a process of its own: a Chat Completions server on 127.0.0.1 that
 * answers every request with the suite's workload, encoded once and written in one go; it prints its
 * URL and exits with the process that started it.
 *
 * @module
 */
import { ChatCompletionsServer, encodeStream } from '@kosong/provider-openai/testing';
import { serveUntilParentExits } from '../../server-process.js';
import { workloadReply } from './workload.js';

const encoded = Buffer.from(encodeStream(workloadReply()));
const server = await ChatCompletionsServer.start({
  defaultReply: (_request, response) => {
    response.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    response.end(encoded);
  },
});
serveUntilParentExits(server.baseURL, () => server.close());
