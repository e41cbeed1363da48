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

const IMAGE = 'https://example.com/image.png';
const REMINDER = '<system-reminder>This is a system reminder</system-reminder>';

/** One request of kosong spec §7.0 `COMMON_CASES`. */
export interface RequestCase {
  readonly system: string;
  readonly tools: readonly Tool[];
  readonly history: readonly Message[];
}

/** kosong spec §7.0 `COMMON_CASES`. */
export const COMMON_CASES: Readonly<Record<string, RequestCase>> = {
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
      createMessage('assistant', "I'll add those numbers for you.", { toolCalls: [toolCall('call_abc123', 'add', '{"a": 2, "b": 3}')] }),
      createMessage('tool', '5', { toolCallId: 'call_abc123' }),
    ],
  },
  tool_call_with_image: {
    system: '',
    tools: [],
    history: [
      createMessage('user', 'Add 2 and 3'),
      createMessage('assistant', "I'll add those numbers for you.", { toolCalls: [toolCall('call_abc123', 'add', '{"a": 2, "b": 3}')] }),
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
};

const ADD_JSON = {
  type: 'function',
  function: {
    name: 'add',
    description: 'Add two integers.',
    parameters: {
      type: 'object',
      properties: { a: { type: 'integer', description: 'First number' }, b: { type: 'integer', description: 'Second number' } },
      required: ['a', 'b'],
    },
  },
};
const MUL_JSON = { type: 'function', function: { ...ADD_JSON.function, name: 'multiply', description: 'Multiply two integers.' } };
const ADD_CALL = { type: 'function', id: 'call_abc123', function: { name: 'add', arguments: '{"a": 2, "b": 3}' } };

/** The `messages` and `tools` of each COMMON_CASES request (kosong spec §7.2, §7.3). */
export const COMMON_SNAPSHOTS: Readonly<Record<string, { readonly messages: unknown[]; readonly tools: unknown[] }>> = {
  simple_user_message: {
    messages: [
      { role: 'system', content: 'You are helpful.' },
      { role: 'user', content: 'Hello!' },
    ],
    tools: [],
  },
  multi_turn_conversation: {
    messages: [
      { role: 'user', content: 'What is 2+2?' },
      { role: 'assistant', content: '2+2 equals 4.' },
      { role: 'user', content: 'And 3+3?' },
    ],
    tools: [],
  },
  multi_turn_with_system: {
    messages: [
      { role: 'system', content: 'You are a math tutor.' },
      { role: 'user', content: 'What is 2+2?' },
      { role: 'assistant', content: '2+2 equals 4.' },
      { role: 'user', content: 'And 3+3?' },
    ],
    tools: [],
  },
  image_url: {
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: "What's in this image?" },
          { type: 'image_url', image_url: { url: IMAGE, id: null } },
        ],
      },
    ],
    tools: [],
  },
  tool_definition: { messages: [{ role: 'user', content: 'Add 2 and 3' }], tools: [ADD_JSON, MUL_JSON] },
  tool_call: {
    messages: [
      { role: 'user', content: 'Add 2 and 3' },
      { role: 'assistant', content: "I'll add those numbers for you.", tool_calls: [ADD_CALL] },
      { role: 'tool', content: '5', tool_call_id: 'call_abc123' },
    ],
    tools: [],
  },
  tool_call_with_image: {
    messages: [
      { role: 'user', content: 'Add 2 and 3' },
      { role: 'assistant', content: "I'll add those numbers for you.", tool_calls: [ADD_CALL] },
      {
        role: 'tool',
        content: [
          { type: 'text', text: '5' },
          { type: 'image_url', image_url: { url: IMAGE, id: null } },
        ],
        tool_call_id: 'call_abc123',
      },
    ],
    tools: [],
  },
  parallel_tool_calls: {
    messages: [
      { role: 'user', content: 'Calculate 2+3 and 4*5' },
      {
        role: 'assistant',
        content: "I'll calculate both.",
        tool_calls: [
          { type: 'function', id: 'call_add', function: { name: 'add', arguments: '{"a": 2, "b": 3}' } },
          { type: 'function', id: 'call_mul', function: { name: 'multiply', arguments: '{"a": 4, "b": 5}' } },
        ],
      },
      {
        role: 'tool',
        content: [
          { type: 'text', text: REMINDER },
          { type: 'text', text: '5' },
        ],
        tool_call_id: 'call_add',
      },
      {
        role: 'tool',
        content: [
          { type: 'text', text: REMINDER },
          { type: 'text', text: '20' },
        ],
        tool_call_id: 'call_mul',
      },
    ],
    tools: [ADD_JSON, MUL_JSON],
  },
};

/** Extra Kimi cases of kosong spec §7.2 and their `messages`/`tools`. */
export const KIMI_CASES: Readonly<Record<string, RequestCase & { readonly expected: { readonly messages: unknown[]; readonly tools: unknown[] } }>> = {
  builtin_tool: {
    system: '',
    tools: [{ name: '$web_search', description: 'Search the web', parameters: { type: 'object', properties: {} } }],
    history: [createMessage('user', 'Search for news')],
    expected: { messages: [{ role: 'user', content: 'Search for news' }], tools: [{ type: 'builtin_function', function: { name: '$web_search' } }] },
  },
  assistant_with_reasoning: {
    system: '',
    tools: [],
    history: [createMessage('user', 'What is 2+2?'), createMessage('assistant', [thinkPart('Let me think...'), textPart('The answer is 4.')])],
    expected: {
      messages: [
        { role: 'user', content: 'What is 2+2?' },
        { role: 'assistant', content: 'The answer is 4.', reasoning_content: 'Let me think...' },
      ],
      tools: [],
    },
  },
  assistant_with_empty_reasoning: {
    system: '',
    tools: [],
    history: [createMessage('user', 'What is 2+2?'), createMessage('assistant', [thinkPart(''), textPart('The answer is 4.')])],
    expected: {
      messages: [
        { role: 'user', content: 'What is 2+2?' },
        { role: 'assistant', content: 'The answer is 4.', reasoning_content: '' },
      ],
      tools: [],
    },
  },
  assistant_tool_call_without_text: {
    system: '',
    tools: [],
    history: [createMessage('user', 'Add 2 and 3'), createMessage('assistant', [], { toolCalls: [toolCall('call_abc123', 'add', '{"a": 2, "b": 3}')] })],
    expected: { messages: [{ role: 'user', content: 'Add 2 and 3' }, { role: 'assistant', tool_calls: [ADD_CALL] }], tools: [] },
  },
  assistant_tool_call_with_reasoning_only: {
    system: '',
    tools: [],
    history: [
      createMessage('user', 'Add 2 and 3'),
      createMessage('assistant', [thinkPart('I should call the tool.')], { toolCalls: [toolCall('call_abc123', 'add', '{"a": 2, "b": 3}')] }),
    ],
    expected: {
      messages: [
        { role: 'user', content: 'Add 2 and 3' },
        { role: 'assistant', reasoning_content: 'I should call the tool.', tool_calls: [ADD_CALL] },
      ],
      tools: [],
    },
  },
};
