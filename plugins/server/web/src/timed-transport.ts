import { DefaultChatTransport, type UIMessage, type UIMessageChunk } from 'ai';

import type { TimelineRecorder, TurnTimeline } from './timeline-recorder.js';

/** A request the server refused: its status and what its JSON error said. */
export class ChatRequestRefused extends Error {
  override readonly name = 'ChatRequestRefused';
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** The text shown when the server answers 401. */
export const WRONG_API_KEY = 'Wrong API key: the server refused it (401). Check the key above.';
/** The text shown when the server answers 401 and no key was given. */
export const NO_API_KEY = 'No API key: enter yours above (the server answered 401).';

/**
 * The AI SDK's `DefaultChatTransport` on the page's own origin, with the key of the key field, that
 * records every chunk it receives, with its arrival time, in a {@link TimelineRecorder}; and whose
 * refused requests fail with the server's own reason ({@link WRONG_API_KEY} for a 401).
 */
export class TimedChatTransport extends DefaultChatTransport<UIMessage> {
  constructor(api: string, apiKey: () => string, private readonly recorder: TimelineRecorder) {
    super({
      api,
      credentials: 'same-origin',
      headers: (): Record<string, string> => {
        const key = apiKey();
        return key === '' ? {} : { authorization: `Bearer ${key}` };
      },
      fetch: async (input, init) => {
        const response = await fetch(input, init);
        if (response.ok) return response;
        if (response.status === 401) throw new ChatRequestRefused(401, apiKey() === '' ? NO_API_KEY : WRONG_API_KEY);
        throw new ChatRequestRefused(response.status, `The server refused the request (${response.status}): ${await errorMessage(response)}`);
      },
    });
  }

  override async sendMessages(options: Parameters<DefaultChatTransport<UIMessage>['sendMessages']>[0]): Promise<ReadableStream<UIMessageChunk>> {
    const startedAt = performance.now();
    const stream = await super.sendMessages(options);
    return this.timed(this.recorder.begin('send', startedAt), stream);
  }

  override async reconnectToStream(options: Parameters<DefaultChatTransport<UIMessage>['reconnectToStream']>[0]): Promise<ReadableStream<UIMessageChunk> | null> {
    const startedAt = performance.now();
    const stream = await super.reconnectToStream(options);
    return stream === null ? null : this.timed(this.recorder.begin('resume', startedAt), stream);
  }

  /** The chunks of `stream`, each recorded as it is read; an end without a last chunk, a failure or a cancel (Stop) cut the turn. */
  private timed(turn: TurnTimeline, stream: ReadableStream<UIMessageChunk>): ReadableStream<UIMessageChunk> {
    const recorder = this.recorder;
    const reader = stream.getReader();
    return new ReadableStream<UIMessageChunk>({
      async pull(controller) {
        let read: ReadableStreamReadResult<UIMessageChunk>;
        try {
          read = await reader.read();
        } catch (error) {
          recorder.cut(turn, performance.now(), `the stream failed: ${error instanceof Error ? error.message : String(error)}`);
          controller.error(error);
          return;
        }
        if (read.done) {
          recorder.cut(turn, performance.now(), 'the stream ended without a finish');
          controller.close();
          return;
        }
        recorder.record(turn, read.value, performance.now());
        controller.enqueue(read.value);
      },
      cancel(reason) {
        recorder.cut(turn, performance.now(), 'closed on this page');
        return reader.cancel(reason);
      },
    });
  }
}

/** The `message` of a JSON error body (`{ "error": { "message" } }`), else the body's text. */
async function errorMessage(response: Response): Promise<string> {
  const text = await response.text().catch(() => '');
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown } };
    if (typeof body.error?.message === 'string') return body.error.message;
  } catch {
    // not JSON: the text itself
  }
  return text.slice(0, 300) || response.statusText;
}
