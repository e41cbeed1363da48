/**
 * `@kosong/provider-openai/testing`: a local Chat Completions server for tests and benchmarks of
 * OpenAI-compatible providers, with builders for its replies and chunks.
 *
 * @packageDocumentation
 */
export {
  ChatCompletionsServer,
  encodeStream,
  type ChatCompletionsServerOptions,
  type CustomReply,
  type HangReply,
  type JsonReply,
  type RecordedRequest,
  type ServerReply,
  type StreamReply,
} from './chat-completions-server.js';
export {
  completionChunk,
  textReply,
  toolCallChunk,
  usageChunk,
  type ChunkDelta,
  type ChunkUsage,
  type ToolCallChunkDelta,
} from './chunks.js';
