/** The media kinds Gemini takes by URL in kosong messages. */
export type MediaKind = 'image' | 'audio';

/** Image types Gemini accepts inline (and GIF, which kosong's original allowed). */
export const IMAGE_TYPES: ReadonlySet<string> = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/heic', 'image/heif']);

/** Audio types Gemini accepts (kosong spec §7.6). */
export const AUDIO_TYPES: ReadonlySet<string> = new Set(['audio/wav', 'audio/mp3', 'audio/aiff', 'audio/aac', 'audio/ogg', 'audio/flac']);

/** Common spellings of the same types, as browsers and servers send them. */
const ALIASES: Readonly<Record<string, string>> = {
  'image/jpg': 'image/jpeg',
  'audio/mpeg': 'audio/mp3',
  'audio/x-wav': 'audio/wav',
  'audio/wave': 'audio/wav',
  'audio/x-aiff': 'audio/aiff',
  'audio/x-flac': 'audio/flac',
};

const BY_EXTENSION: Readonly<Record<string, string>> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  heic: 'image/heic',
  heif: 'image/heif',
  wav: 'audio/wav',
  mp3: 'audio/mp3',
  aif: 'audio/aiff',
  aiff: 'audio/aiff',
  aac: 'audio/aac',
  ogg: 'audio/ogg',
  flac: 'audio/flac',
};

/** The type assumed when neither the server nor the URL says (kosong spec §7.6). */
export const DEFAULT_TYPE: Readonly<Record<MediaKind, string>> = { image: 'image/png', audio: 'audio/mp3' };

/** The accepted types of a kind. */
export function acceptedTypes(kind: MediaKind): ReadonlySet<string> {
  return kind === 'image' ? IMAGE_TYPES : AUDIO_TYPES;
}

/** A MIME type without parameters, lower-cased, with common aliases resolved. */
export function normalizeMediaType(type: string): string {
  const bare = type.split(';')[0]!.trim().toLowerCase();
  return ALIASES[bare] ?? bare;
}

/** The type a URL's file extension suggests, if it is a known media extension. */
export function mediaTypeFromURL(url: string): string | undefined {
  let path: string;
  try {
    path = new URL(url).pathname;
  } catch {
    return undefined;
  }
  const dot = path.lastIndexOf('.');
  return dot === -1 ? undefined : BY_EXTENSION[path.slice(dot + 1).toLowerCase()];
}
