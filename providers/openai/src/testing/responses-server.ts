import { responseEvents, type OutputItemScript, type ResponseEnding } from './responses-events.js';
import { SSEReplyServer, type ServerReply, type StreamReply } from './sse-reply-server.js';

/** Options of {@link ResponsesServer.start}. */
export interface ResponsesServerOptions {
  /** The reply when no queued reply is left; default: a short text response ({@link responsesReply}). */
  readonly defaultReply?: ServerReply;
}

/**
 * A local HTTP server speaking the OpenAI Responses SSE format, for tests and benchmarks: it
 * listens on 127.0.0.1 on an ephemeral port, records every request (headers, exact body), and
 * answers `POST …/responses` with the replies queued with {@link SSEReplyServer.reply}, in order
 * (then the default reply). A stream reply's chunks are events: an object goes out as
 * `event: <its type>` and `data: <JSON>`, a string as a bare `data:` line (e.g. malformed data).
 * There is no `[DONE]`: a Responses stream ends with its `response.completed` event.
 *
 * @example
 * const server = await ResponsesServer.start();
 * server.reply(responsesReply([{ type: 'message', text: ['Hello', ' world'] }]));
 * const provider = new OpenAIResponsesChatProvider({ baseURL: server.baseURL, apiKey: 'sk-test', model: 'gpt-5.1' });
 * // … server.lastRequest.body is the request body
 * await server.close();
 */
export class ResponsesServer extends SSEReplyServer {
  private constructor(defaultReply: ServerReply) {
    super({ route: '/responses', events: responsesStreamEvents }, defaultReply);
  }

  /** Starts a server on 127.0.0.1 (ephemeral port). */
  static async start(options: ResponsesServerOptions = {}): Promise<ResponsesServer> {
    return SSEReplyServer.listen(new ResponsesServer(options.defaultReply ?? responsesReply([{ type: 'message', text: ['Hello', ' from the test server.'] }])));
  }
}

/** A stream reply of a whole response with these output items ({@link responseEvents}). */
export function responsesReply(
  items: readonly OutputItemScript[],
  options: ResponseEnding & Omit<StreamReply, 'type' | 'chunks' | 'done'> = {},
): StreamReply {
  const { id, model, usage, status, incompleteReason, ...reply } = options;
  const ending: ResponseEnding = {
    ...(id === undefined ? {} : { id }),
    ...(model === undefined ? {} : { model }),
    ...(usage === undefined ? {} : { usage }),
    ...(status === undefined ? {} : { status }),
    ...(incompleteReason === undefined ? {} : { incompleteReason }),
  };
  return { type: 'stream', chunks: responseEvents(items, ending), ...reply };
}

/** The SSE events of a stream reply: `event: <type>` and `data: <JSON>` per object, `data: <string>` per string. */
function responsesStreamEvents(reply: StreamReply): string[] {
  return reply.chunks.map((chunk) => {
    if (typeof chunk === 'string') return `data: ${chunk}\n\n`;
    const type = (chunk as { type?: unknown }).type;
    return typeof type === 'string' ? `event: ${type}\ndata: ${JSON.stringify(chunk)}\n\n` : `data: ${JSON.stringify(chunk)}\n\n`;
  });
}

/** The whole body of a stream reply as the server sends it (e.g. to serve it from elsewhere in one write). */
export function encodeResponsesStream(reply: StreamReply): string {
  return responsesStreamEvents(reply).join('');
}
