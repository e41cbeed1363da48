/**
 * `@kosong/provider-openai/testing`: local Chat Completions and Responses servers for tests and
 * benchmarks of OpenAI-compatible providers, with builders for their replies, chunks and events.
 *
 * @packageDocumentation
 */
export { ChatCompletionsServer, encodeStream, type ChatCompletionsServerOptions } from './chat-completions-server.js';
export { ResponsesServer, encodeResponsesStream, responsesReply, type ResponsesServerOptions } from './responses-server.js';
export {
  SSEReplyServer,
  type CustomReply,
  type HangReply,
  type JsonReply,
  type RecordedRequest,
  type ServerReply,
  type StreamFormat,
  type StreamReply,
} from './sse-reply-server.js';
export {
  completionChunk,
  textReply,
  toolCallChunk,
  usageChunk,
  type ChunkDelta,
  type ChunkUsage,
  type ToolCallChunkDelta,
} from './chunks.js';
export {
  errorEvent,
  responseEvents,
  responseFailedEvent,
  responseObject,
  type OutputItemScript,
  type ResponseEnding,
  type ResponseUsage,
} from './responses-events.js';
