import { createMessage, imageURLPart, textPart, thinkPart, toolCall, type Message, type Tool } from '@kosong/core';

/** kosong spec §7.0 `ADD_TOOL`. */
export const ADD_TOOL: Tool = {
  name: 'add',
  description: 'Add two integers.',
  parameters: {
    type: 'object',
    properties: { a: { type: 'integer', description: 'First number' }, b: { type: 'integer', description: 'Second number' } },
    required: ['a', 'b'],
  },
};

/** kosong spec §7.0 `MUL_TOOL`. */
export const MUL_TOOL: Tool = { ...ADD_TOOL, name: 'multiply', description: 'Multiply two integers.' };

/** kosong spec §7.0 `B64_PNG`: a 1×1 PNG. */
export const B64_PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

const IMAGE = 'https://example.com/image.png';
const REMINDER = '<system-reminder>This is a system reminder</system-reminder>';
const EPHEMERAL = { type: 'ephemeral' };

/** One request of the snapshot tests. */
export interface RequestCase {
  readonly system: string;
  readonly tools: readonly Tool[];
  readonly history: readonly Message[];
}

const addCall = toolCall('call_abc123', 'add', '{"a": 2, "b": 3}');

/** kosong spec §7.0 `COMMON_CASES`, plus the Anthropic cases of §7.5. */
export const CASES: Readonly<Record<string, RequestCase>> = {
  simple_user_message: { system: 'You are helpful.', tools: [], history: [createMessage('user', 'Hello!')] },
  multi_turn_conversation: {
    system: '',
    tools: [],
    history: [createMessage('user', 'What is 2+2?'), createMessage('assistant', '2+2 equals 4.'), createMessage('user', 'And 3+3?')],
  },
  multi_turn_with_system: {
    system: 'You are a math tutor.',
    tools: [],
    history: [createMessage('user', 'What is 2+2?'), createMessage('assistant', '2+2 equals 4.'), createMessage('user', 'And 3+3?')],
  },
  image_url: { system: '', tools: [], history: [createMessage('user', [textPart("What's in this image?"), imageURLPart(IMAGE)])] },
  tool_definition: { system: '', tools: [ADD_TOOL, MUL_TOOL], history: [createMessage('user', 'Add 2 and 3')] },
  tool_call: {
    system: '',
    tools: [],
    history: [
      createMessage('user', 'Add 2 and 3'),
      createMessage('assistant', "I'll add those numbers for you.", { toolCalls: [addCall] }),
      createMessage('tool', '5', { toolCallId: 'call_abc123' }),
    ],
  },
  tool_call_with_image: {
    system: '',
    tools: [],
    history: [
      createMessage('user', 'Add 2 and 3'),
      createMessage('assistant', "I'll add those numbers for you.", { toolCalls: [addCall] }),
      createMessage('tool', [textPart('5'), imageURLPart(IMAGE)], { toolCallId: 'call_abc123' }),
    ],
  },
  parallel_tool_calls: {
    system: '',
    tools: [ADD_TOOL, MUL_TOOL],
    history: [
      createMessage('user', 'Calculate 2+3 and 4*5'),
      createMessage('assistant', "I'll calculate both.", {
        toolCalls: [toolCall('call_add', 'add', '{"a": 2, "b": 3}'), toolCall('call_mul', 'multiply', '{"a": 4, "b": 5}')],
      }),
      createMessage('tool', [textPart(REMINDER), textPart('5')], { toolCallId: 'call_add' }),
      createMessage('tool', [textPart(REMINDER), textPart('20')], { toolCallId: 'call_mul' }),
    ],
  },
  assistant_with_thinking: {
    system: '',
    tools: [],
    history: [createMessage('user', 'What is 2+2?'), createMessage('assistant', [thinkPart('Let me think...', 'sig_abc123'), textPart('The answer is 4.')])],
  },
  thinking_without_signature_stripped: {
    system: '',
    tools: [],
    history: [createMessage('user', 'Hi'), createMessage('assistant', [thinkPart('Thinking...'), textPart('Hello!')])],
  },
  base64_image: {
    system: '',
    tools: [],
    history: [createMessage('user', [textPart('Describe:'), imageURLPart(`data:image/png;base64,${B64_PNG}`)])],
  },
};

const ADD_JSON = {
  name: 'add',
  description: 'Add two integers.',
  input_schema: {
    type: 'object',
    properties: { a: { type: 'integer', description: 'First number' }, b: { type: 'integer', description: 'Second number' } },
    required: ['a', 'b'],
  },
};
const MUL_JSON = { ...ADD_JSON, name: 'multiply', description: 'Multiply two integers.' };
const ADD_USE = { type: 'tool_use', id: 'call_abc123', name: 'add', input: { a: 2, b: 3 } };

/** The expected `messages`, `system` (absent: `undefined`) and `tools` of each case (kosong spec §7.5). */
export const SNAPSHOTS: Readonly<Record<string, { readonly messages: unknown[]; readonly system?: unknown[]; readonly tools: unknown[] }>> = {
  simple_user_message: {
    messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello!', cache_control: EPHEMERAL }] }],
    system: [{ type: 'text', text: 'You are helpful.', cache_control: EPHEMERAL }],
    tools: [],
  },
  multi_turn_conversation: {
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'What is 2+2?' }] },
      { role: 'assistant', content: [{ type: 'text', text: '2+2 equals 4.' }] },
      { role: 'user', content: [{ type: 'text', text: 'And 3+3?', cache_control: EPHEMERAL }] },
    ],
    tools: [],
  },
  multi_turn_with_system: {
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'What is 2+2?' }] },
      { role: 'assistant', content: [{ type: 'text', text: '2+2 equals 4.' }] },
      { role: 'user', content: [{ type: 'text', text: 'And 3+3?', cache_control: EPHEMERAL }] },
    ],
    system: [{ type: 'text', text: 'You are a math tutor.', cache_control: EPHEMERAL }],
    tools: [],
  },
  image_url: {
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: "What's in this image?" },
          { type: 'image', source: { type: 'url', url: IMAGE }, cache_control: EPHEMERAL },
        ],
      },
    ],
    tools: [],
  },
  tool_definition: {
    messages: [{ role: 'user', content: [{ type: 'text', text: 'Add 2 and 3', cache_control: EPHEMERAL }] }],
    tools: [ADD_JSON, { ...MUL_JSON, cache_control: EPHEMERAL }],
  },
  tool_call: {
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'Add 2 and 3' }] },
      { role: 'assistant', content: [{ type: 'text', text: "I'll add those numbers for you." }, ADD_USE] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_abc123', content: [{ type: 'text', text: '5' }], cache_control: EPHEMERAL }] },
    ],
    tools: [],
  },
  tool_call_with_image: {
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'Add 2 and 3' }] },
      { role: 'assistant', content: [{ type: 'text', text: "I'll add those numbers for you." }, ADD_USE] },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'call_abc123',
            content: [
              { type: 'text', text: '5' },
              { type: 'image', source: { type: 'url', url: IMAGE } },
            ],
            cache_control: EPHEMERAL,
          },
        ],
      },
    ],
    tools: [],
  },
  parallel_tool_calls: {
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'Calculate 2+3 and 4*5' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: "I'll calculate both." },
          { type: 'tool_use', id: 'call_add', name: 'add', input: { a: 2, b: 3 } },
          { type: 'tool_use', id: 'call_mul', name: 'multiply', input: { a: 4, b: 5 } },
        ],
      },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'call_add',
            content: [
              { type: 'text', text: REMINDER },
              { type: 'text', text: '5' },
            ],
          },
          {
            type: 'tool_result',
            tool_use_id: 'call_mul',
            content: [
              { type: 'text', text: REMINDER },
              { type: 'text', text: '20' },
            ],
            cache_control: EPHEMERAL,
          },
        ],
      },
    ],
    tools: [ADD_JSON, { ...MUL_JSON, cache_control: EPHEMERAL }],
  },
  assistant_with_thinking: {
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'What is 2+2?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'Let me think...', signature: 'sig_abc123' },
          { type: 'text', text: 'The answer is 4.', cache_control: EPHEMERAL },
        ],
      },
    ],
    tools: [],
  },
  thinking_without_signature_stripped: {
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'Hi' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Hello!', cache_control: EPHEMERAL }] },
    ],
    tools: [],
  },
  base64_image: {
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Describe:' },
          { type: 'image', source: { type: 'base64', data: B64_PNG, media_type: 'image/png' }, cache_control: EPHEMERAL },
        ],
      },
    ],
    tools: [],
  },
};
