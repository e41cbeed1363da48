/**
 * `@kosong/core/provider-kit`: what a provider is written with, so that a provider package holds its
 * wire mapping and nothing else. See "Writing a provider" (`docs/writing-a-provider.md`).
 *
 * - the contract: {@link ChatProvider}, {@link StreamedMessage}, the `ChatProviderError` family,
 *   generation options, structured output, token usage;
 * - the class plumbing: {@link BaseChatProvider} (`withThinking`, `withGeneration`, copies,
 *   `toJSON`, `util.inspect`, secrets kept out of them) and {@link generationForCall} (the options
 *   core resolved for the call, not resolved again);
 * - the stream: {@link readEventStream} / {@link EventStream}, one read loop over a response body
 *   with the idle timer, the caller's signal and the request's end; {@link SseJsonDecoder} for
 *   server-sent events of JSON, feeding the provider's {@link StreamEventConverter};
 * - errors: {@link sdkErrorConverter}, one skeleton for mapping an SDK's errors, configured with the
 *   SDK's classes; {@link httpStatusError}; secrets (`redactSecrets`, `scrubSecrets`,
 *   {@link credentialHeaderValues}); transport facts (`transportFailureKind`, `retryAfterSeconds`);
 * - HTTP: {@link SdkConnectionOptions} and {@link clientOf} (a client, or a key to make one),
 *   `sameOriginRedirects` (credentials never follow a redirect to another origin), `dropRest`,
 *   {@link readBodyStart} (the start of an unexpected body, for an error).
 *
 * - the stream's parts: {@link mergePart} (the merge rules of a stream, over a {@link PendingPart}),
 *   `isContentPart`; {@link parseToolArguments} (a call's arguments as JSON, for the wire);
 * - the package: {@link ProviderPluginFactory} (what a provider package's plugin function is),
 *   `errorMarker` / `markError` / `hasErrorMarker`, {@link checkKnownOptions}.
 *
 * It loads neither inversify nor zod. The message model (parts, messages) comes from `@kosong/core`.
 *
 * @packageDocumentation
 */
export * from '../provider/chat-provider.js';
export { generationForCall, resolveCallGeneration, withResolvedGeneration, type ResolvedGeneration } from '../provider/call-generation.js';
export * from '../provider/token-usage.js';
export * from '../provider/errors.js';
export * from '../provider/generation-options.js';
export * from '../provider/generation-option-errors.js';
export * from '../provider/output-format.js';
export * from '../provider/secret-scrubbing.js';
export { IdleTimer } from '../provider/idle-timer.js';
export { redirectRefusal, sameOriginRedirects } from '../provider/same-origin-redirects.js';
export { dropRest, REST_BYTES, REST_MS } from '../provider/body-rest.js';
export { feedEveryLineEnd, type SseFeed } from '../provider/sse-line-ends.js';
export { errorChainMessages, retryAfterSeconds, transportFailureKind } from '../provider/transport-failures.js';
export { errorMarker, hasErrorMarker, markError } from '../error-marker.js';
export { checkKnownOptions, type KnownOptions } from '../known-options.js';
export { mergePart, type PendingPart } from '../message/merge.js';
export { isContentPart, type ContentPartType, type MediaURL } from '../message/parts.js';
export type { MessageExtras } from '../message/message.js';
export { MAX_TOOL_ARGUMENTS_LENGTH, parseToolArguments, type ParsedArguments, type ParseToolArgumentsOptions } from '../tooling/arguments.js';
export type { ProviderPluginFactory } from '../kernel/provider-catalog.js';

export { BaseChatProvider, type ProviderChanges, type ProviderState } from './base-chat-provider.js';
export { EventStream, readEventStream, type EventStreamOptions, type EventStreamSource, type StreamDecoder, type StreamFacts } from './event-stream.js';
export {
  MAX_EVENT_CHARS,
  parseEventData,
  SseJsonDecoder,
  type CreateSseParser,
  type SseEvent,
  type SseJsonDecoderOptions,
  type SseParserConfig,
  type StreamEventConverter,
} from './sse-json-decoder.js';
export {
  errorClassNames,
  headersOf,
  httpStatusError,
  sdkErrorConverter,
  type HttpStatusErrorDetails,
  type SdkErrorConverter,
  type SdkErrorFacts,
  type SdkErrorMapping,
} from './sdk-errors.js';
export { credentialHeaderValues } from './credential-headers.js';
export { clientOf, readBodyStart, type BodyStart, type SdkConnectionOptions } from './sdk-connection.js';
