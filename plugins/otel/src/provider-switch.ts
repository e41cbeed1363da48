import { APIStatusError } from '@kosong/core';
import { trace, type Attributes, type Span } from '@opentelemetry/api';

import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_KOSONG_FALLBACK_FROM_INDEX,
  ATTR_KOSONG_FALLBACK_FROM_MODEL,
  ATTR_KOSONG_FALLBACK_FROM_PROVIDER,
  ATTR_KOSONG_FALLBACK_REASON,
  ATTR_KOSONG_FALLBACK_TO_MODEL,
  ATTR_KOSONG_FALLBACK_TO_PROVIDER,
  EVENT_KOSONG_PROVIDER_FALLBACK,
} from './conventions.js';
import { errorTypeOf } from './error-type.js';

/** A model of a switch, as `@kosong/provider-fallback` names it (its `ModelRef`). */
export interface SwitchedModel {
  readonly name: string;
  readonly modelName: string;
  readonly index?: number;
}

/**
 * A switch of a model fallback: the shape of `@kosong/provider-fallback`'s `FallbackSwitchEvent`,
 * written here by its fields so that this plugin depends on no provider package.
 */
export interface ProviderSwitch {
  readonly from: SwitchedModel;
  readonly to: SwitchedModel;
  readonly reason?: string;
  readonly error: unknown;
}

/**
 * Records a model fallback's switch as a `kosong.provider.fallback` event on `span` — by default the
 * active span, which is the step's `chat` span while its provider call runs (the plugin makes it the
 * active context there; a context manager must be registered, as for any instrumentation). Give it
 * to the fallback as its listener:
 *
 * ```ts
 * fallbackProvider([primary, secondary], { onSwitch: recordProviderSwitch });
 * ```
 *
 * Attributes: `kosong.fallback.from.provider`, `.from.model`, `.from.index`, `.to.provider`,
 * `.to.model`, `kosong.fallback.reason` (`error` or `circuit-open`), `error.type` (the error's name)
 * and `http.response.status_code` for an `APIStatusError`. No span active, or one not recording:
 * nothing. Never throws.
 */
export function recordProviderSwitch(event: ProviderSwitch, span: Span | undefined = trace.getActiveSpan()): void {
  try {
    if (span === undefined || !span.isRecording()) return;
    const attributes: Attributes = {
      [ATTR_KOSONG_FALLBACK_FROM_PROVIDER]: event.from.name,
      [ATTR_KOSONG_FALLBACK_FROM_MODEL]: event.from.modelName,
      [ATTR_KOSONG_FALLBACK_TO_PROVIDER]: event.to.name,
      [ATTR_KOSONG_FALLBACK_TO_MODEL]: event.to.modelName,
      [ATTR_ERROR_TYPE]: errorTypeOf(event.error),
    };
    if (typeof event.from.index === 'number') attributes[ATTR_KOSONG_FALLBACK_FROM_INDEX] = event.from.index;
    if (typeof event.reason === 'string') attributes[ATTR_KOSONG_FALLBACK_REASON] = event.reason;
    if (APIStatusError.isInstance(event.error)) attributes[ATTR_HTTP_RESPONSE_STATUS_CODE] = event.error.statusCode;
    span.addEvent(EVENT_KOSONG_PROVIDER_FALLBACK, attributes);
  } catch {
    // telemetry never fails the call it describes
  }
}
