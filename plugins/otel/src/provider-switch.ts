import { APIStatusError, type ProviderSwitchEvent } from '@kosong/core';
import type { Attributes } from '@opentelemetry/api';

import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_KOSONG_FALLBACK_FROM_MODEL,
  ATTR_KOSONG_FALLBACK_FROM_PROVIDER,
  ATTR_KOSONG_FALLBACK_REASON,
  ATTR_KOSONG_FALLBACK_TO_MODEL,
  ATTR_KOSONG_FALLBACK_TO_PROVIDER,
} from './conventions.js';
import { errorTypeOf } from './error-type.js';

/**
 * The attributes of a `kosong.provider.fallback` span event: the models passed over and asked next,
 * why, the error's type and, for an `APIStatusError`, its HTTP status.
 */
export function providerSwitchAttributes(event: ProviderSwitchEvent): Attributes {
  const attributes: Attributes = {
    [ATTR_KOSONG_FALLBACK_FROM_PROVIDER]: event.from.provider,
    [ATTR_KOSONG_FALLBACK_FROM_MODEL]: event.from.model,
    [ATTR_KOSONG_FALLBACK_TO_PROVIDER]: event.to.provider,
    [ATTR_KOSONG_FALLBACK_TO_MODEL]: event.to.model,
    [ATTR_KOSONG_FALLBACK_REASON]: event.reason,
    [ATTR_ERROR_TYPE]: errorTypeOf(event.error),
  };
  if (APIStatusError.isInstance(event.error)) attributes[ATTR_HTTP_RESPONSE_STATUS_CODE] = event.error.statusCode;
  return attributes;
}
