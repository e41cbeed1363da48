/**
 * The `gemini` suite's workload: one streamed `generateContent` response of {@link TEXT_EVENTS}
 * text events with a function call every {@link CALL_EVERY} events, then a `STOP` event with usage,
 * as the events of a Gemini REST stream (JSON text, serialised once).
 *
 * @module
 */
import { wireChunk, wireFunctionCall, wireText } from '@kosong/provider-google/testing';

/** Text events in the response. */
export const TEXT_EVENTS = 50_000;
/** One function call event after every this many text events. */
export const CALL_EVERY = 500;
/** Function calls in the response. */
export const CALLS = TEXT_EVENTS / CALL_EVERY;
/** The text of each text event. */
export const DELTA = 'tok ';

/** The response's events, each the JSON of one `GenerateContentResponse`. */
export function workloadEvents(): string[] {
  const events: string[] = [];
  for (let i = 1; i <= TEXT_EVENTS; i++) {
    events.push(JSON.stringify(wireChunk({ parts: [wireText(DELTA)] })));
    if (i % CALL_EVERY === 0) events.push(JSON.stringify(wireChunk({ parts: [wireFunctionCall('record', { i: i / CALL_EVERY })] })));
  }
  events.push(JSON.stringify(wireChunk({ finishReason: 'STOP', usage: { promptTokenCount: 10, candidatesTokenCount: TEXT_EVENTS + CALLS } })));
  return events;
}
