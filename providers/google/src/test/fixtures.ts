import { createMessage, textPart, toolCall, type Message, type Tool } from '@kosong/core';

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

const REMINDER = '<system-reminder>This is a system reminder</system-reminder>';

/** One request of kosong spec §7.0 `COMMON_CASES`. */
export interface RequestCase {
  readonly system: string;
  readonly tools: readonly Tool[];
  readonly history: readonly Message[];
}

/** The `COMMON_CASES` of kosong spec §7.0 that the Gemini snapshots use (the image cases are left out there), plus the thought signature case of §7.6. */
export const GEMINI_CASES: Readonly<Record<string, RequestCase>> = {
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
  tool_call_with_thought_signature: {
    system: '',
    tools: [],
    history: [
      createMessage('user', 'Add 2 and 3'),
      createMessage('assistant', "I'll add those.", {
        toolCalls: [toolCall('call_abc123', 'add', '{"a": 2, "b": 3}', { thought_signature_b64: 'dGhvdWdodF9zaWduYXR1cmVfZGF0YQ==' })],
      }),
      createMessage('tool', '5', { toolCallId: 'call_abc123' }),
    ],
  },
};

const declaration = (tool: Tool): object => ({ name: tool.name, description: tool.description, parametersJsonSchema: tool.parameters });
const system = (text: string): object => ({ parts: [{ text }], role: 'user' });

/**
 * The `contents`, `systemInstruction` and `tools` of each case on the wire (kosong spec §7.6), in the
 * REST API's documented camelCase as `@google/genai` (TypeScript) sends it. Differences from the
 * Python snapshots, all SDK artefacts there: `parametersJsonSchema` (Python: `parameters_json_schema`),
 * and no empty `parts: []` in a `functionResponse`.
 */
export const GEMINI_SNAPSHOTS: Readonly<Record<string, Readonly<Record<string, unknown>>>> = {
  simple_user_message: { contents: [{ parts: [{ text: 'Hello!' }], role: 'user' }], systemInstruction: system('You are helpful.') },
  multi_turn_conversation: {
    contents: [
      { parts: [{ text: 'What is 2+2?' }], role: 'user' },
      { parts: [{ text: '2+2 equals 4.' }], role: 'model' },
      { parts: [{ text: 'And 3+3?' }], role: 'user' },
    ],
    systemInstruction: system(''),
  },
  multi_turn_with_system: {
    contents: [
      { parts: [{ text: 'What is 2+2?' }], role: 'user' },
      { parts: [{ text: '2+2 equals 4.' }], role: 'model' },
      { parts: [{ text: 'And 3+3?' }], role: 'user' },
    ],
    systemInstruction: system('You are a math tutor.'),
  },
  tool_definition: {
    contents: [{ parts: [{ text: 'Add 2 and 3' }], role: 'user' }],
    systemInstruction: system(''),
    tools: [{ functionDeclarations: [declaration(ADD_TOOL), declaration(MUL_TOOL)] }],
  },
  tool_call: {
    contents: [
      { parts: [{ text: 'Add 2 and 3' }], role: 'user' },
      { parts: [{ text: "I'll add those numbers for you." }, { functionCall: { args: { a: 2, b: 3 }, name: 'add' } }], role: 'model' },
      { parts: [{ functionResponse: { name: 'add', response: { output: '5' } } }], role: 'user' },
    ],
    systemInstruction: system(''),
  },
  parallel_tool_calls: {
    contents: [
      { parts: [{ text: 'Calculate 2+3 and 4*5' }], role: 'user' },
      {
        parts: [{ text: "I'll calculate both." }, { functionCall: { args: { a: 2, b: 3 }, name: 'add' } }, { functionCall: { args: { a: 4, b: 5 }, name: 'multiply' } }],
        role: 'model',
      },
      {
        parts: [
          { functionResponse: { name: 'add', response: { output: `${REMINDER}5` } } },
          { functionResponse: { name: 'multiply', response: { output: `${REMINDER}20` } } },
        ],
        role: 'user',
      },
    ],
    systemInstruction: system(''),
    tools: [{ functionDeclarations: [declaration(ADD_TOOL), declaration(MUL_TOOL)] }],
  },
  tool_call_with_thought_signature: {
    contents: [
      { parts: [{ text: 'Add 2 and 3' }], role: 'user' },
      {
        parts: [{ text: "I'll add those." }, { functionCall: { name: 'add', args: { a: 2, b: 3 } }, thoughtSignature: 'dGhvdWdodF9zaWduYXR1cmVfZGF0YQ==' }],
        role: 'model',
      },
      { parts: [{ functionResponse: { name: 'add', response: { output: '5' } } }], role: 'user' },
    ],
    systemInstruction: system(''),
  },
};
