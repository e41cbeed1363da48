/**
 * `@kosong/provider-google/testing`: a local Gemini REST streaming server for tests and benchmarks
 * of Gemini providers, with builders for its replies and response events.
 *
 * @packageDocumentation
 */
export {
  GeminiServer,
  write,
  type BodyReply,
  type CustomReply,
  type GeminiServerOptions,
  type HangReply,
  type RecordedRequest,
  type ServerReply,
  type StreamReply,
} from './gemini-server.js';
export { errorBody, textReply, wireChunk, wireFunctionCall, wireText, wireThought, type ChunkOptions, type WirePart, type WireUsage } from './responses.js';
