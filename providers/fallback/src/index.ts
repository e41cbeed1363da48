/**
 * `@kosong/provider-fallback`: model fallback for kosong. {@link fallbackProvider} is a `ChatProvider`
 * over a chain of models that moves to the next model on a retryable error (or what the policy says)
 * before the first part has been delivered, never after it, with a cockatiel circuit breaker per model.
 *
 * @packageDocumentation
 */
export { FallbackChatProvider, fallbackProvider, type ModelStatus } from './fallback-provider.js';
export { DEFAULT_CONSECUTIVE_FAILURES, DEFAULT_HALF_OPEN_AFTER_MS, type BreakerPolicy, type FallbackPolicy } from './fallback-policy.js';
export {
  writeListenerErrorToStderr,
  type BreakerChangeEvent,
  type BreakerState,
  type FailureAfterOutputEvent,
  type FallbackListenerErrorHandler,
  type FallbackListenerName,
  type FallbackSwitchEvent,
} from './fallback-events.js';
export { AllModelsFailedError, CircuitOpenError, type BreakerRefusal, type ModelFailure } from './errors.js';
export { FallbackStream } from './fallback-stream.js';
export type { ModelRef } from './model-ref.js';
