/**
 * `@kosong/provider-anthropic/testing`: a local Messages API server for tests and benchmarks, with
 * builders for its replies and events.
 *
 * @packageDocumentation
 */
export {
  MessagesServer,
  apiError,
  encodeEvent,
  type BodyReply,
  type CustomReply,
  type EventStreamReply,
  type HangReply,
  type MessagesServerOptions,
  type RecordedRequest,
  type ServerReply,
} from './messages-server.js';
export {
  blockDelta,
  blockEvents,
  blockStart,
  blockStop,
  errorEvent,
  messageDelta,
  messageReply,
  messageStart,
  messageStop,
  ping,
  textReply,
  type MessageReplyOptions,
  type ReplyBlock,
  type SseEvent,
  type WireUsage,
} from './events.js';
