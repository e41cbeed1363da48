import { SSEReplyServer, type ServerReply, type StreamReply } from './sse-reply-server.js';
import { textReply } from './chunks.js';

/** Options of {@link ChatCompletionsServer.start}. */
export interface ChatCompletionsServerOptions {
  /** The reply when no queued reply is left; default: a short text stream ({@link textReply}). */
  readonly defaultReply?: ServerReply;
}

/**
 * A local HTTP server speaking the OpenAI Chat Completions SSE format, for tests and benchmarks:
 * it listens on 127.0.0.1 on an ephemeral port, records every request (headers, exact body), and
 * answers `POST …/chat/completions` with the replies queued with {@link ChatCompletionsServer.reply}, in
 * order (then the default reply). Other paths get a 404 JSON error.
 *
 * @example
 * const server = await ChatCompletionsServer.start();
 * server.reply(textReply(['Hello', ' world']));
 * const provider = new OpenAIChatProvider({ baseURL: server.baseURL, apiKey: 'sk-test', model: 'm' });
 * // … server.lastRequest.body is the request body
 * await server.close();
 */
export class ChatCompletionsServer extends SSEReplyServer {
  private constructor(defaultReply: ServerReply) {
    super({ route: '/chat/completions', events: streamEvents }, defaultReply);
  }

  /** Starts a server on 127.0.0.1 (ephemeral port). */
  static async start(options: ChatCompletionsServerOptions = {}): Promise<ChatCompletionsServer> {
    return SSEReplyServer.listen(new ChatCompletionsServer(options.defaultReply ?? textReply(['Hello', ' from the test server.'])));
  }
}

/** The SSE events of a stream reply: `data: <chunk>` each, then `data: [DONE]` unless `done` is false. */
function streamEvents(reply: StreamReply): string[] {
  const events = reply.chunks.map((chunk) => `data: ${typeof chunk === 'string' ? chunk : JSON.stringify(chunk)}\n\n`);
  if (reply.done ?? true) events.push('data: [DONE]\n\n');
  return events;
}

/** The whole body of a stream reply as the server sends it (e.g. to serve it from elsewhere in one write). */
export function encodeStream(reply: StreamReply): string {
  return streamEvents(reply).join('');
}
