import type { JsonValue, StreamedMessagePart } from './parts.js';

/**
 * Freezes a part and everything inside it, so an observer can neither see nor cause a change.
 * Returns the same object. Freezing an already frozen object is a no-op.
 */
export function freezePart(part: StreamedMessagePart): StreamedMessagePart {
  switch (part.type) {
    case 'image_url':
      Object.freeze(part.imageUrl);
      break;
    case 'audio_url':
      Object.freeze(part.audioUrl);
      break;
    case 'video_url':
      Object.freeze(part.videoUrl);
      break;
    case 'function':
      Object.freeze(part.function);
      if (part.extras) freezeJson(part.extras);
      break;
    default:
      break;
  }
  return Object.freeze(part);
}

/** Freezes a JSON value and everything inside it (stops at what is frozen already). */
export function freezeJson(value: JsonValue): void {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const inner of Object.values(value)) freezeJson(inner as JsonValue);
}
