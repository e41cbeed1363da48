import { audioURLPart, imageURLPart, textPart, thinkPart, toolCall, toolCallPart, videoURLPart, type StreamedMessagePart } from '@kosong/core';

import { lines } from './support.js';

/** The worked example of kosong spec §8.3 (test_echo_chat_provider_streams_parts). */
export const WORKED_EXAMPLE = lines(
  'id: echo-42',
  'usage: {"input_other": 10, "output": 2, "input_cache_read": 3}',
  'text: Hello,',
  'text:  world!',
  'think: thinking...',
  'image_url: {"url": "https://example.com/image.png", "id": "img-1"}',
  'audio_url: https://example.com/audio.mp3',
  'video_url: https://example.com/video.mp4',
  'tool_call: {"id": "call-1", "name": "search", "arguments": "{\\"q\\":\\"python\\"", "extras": {"source": "test"}}',
  'tool_call_part: {"arguments_part": "}"}',
);

/** The parts of {@link WORKED_EXAMPLE}. */
export const WORKED_EXAMPLE_PARTS: readonly StreamedMessagePart[] = [
  textPart('Hello,'),
  textPart(' world!'),
  thinkPart('thinking...'),
  imageURLPart('https://example.com/image.png', 'img-1'),
  audioURLPart('https://example.com/audio.mp3'),
  videoURLPart('https://example.com/video.mp4'),
  toolCall('call-1', 'search', '{"q":"python"', { source: 'test' }),
  toolCallPart('}'),
];

