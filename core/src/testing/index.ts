/**
 * `@kosong/core/testing`: helpers for the local servers a provider's tests talk to over real HTTP.
 * Not loaded by the root entry.
 */
export { ReplyPacer, writeChunk, type EventStreamPacing } from './reply-pacer.js';
export { recordRequest, type RecordedRequest } from './recorded-request.js';
export { otherOriginServer, redirectTo, type OtherOriginServer } from './other-origin.js';
