import type { StreamedMessagePart } from './parts.js';

/** Freezes a part and the objects inside it, so an observer can neither see nor cause a change. */
export function freezePart(part: StreamedMessagePart): StreamedMessagePart {
  if (Object.isFrozen(part)) return part;
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
      if (part.extras) Object.freeze(part.extras);
      break;
    default:
      break;
  }
  return Object.freeze(part);
}
