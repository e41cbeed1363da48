import { expect } from 'chai';
import fc from 'fast-check';

import {
  emptyToolset,
  imageURLPart,
  textPart,
  toolCall,
  toolError,
  toolOk,
  type JsonValue,
  type ToolContext,
  type ToolReturnValue,
} from '../index.js';
import {
  briefOf,
  describeError,
  isToolResult,
  isToolReturnValue,
  MAX_TOOL_ARGUMENTS_LENGTH,
  parseToolArguments,
  toolCancelled,
  toolInvalidReturn,
  toolNotExecuted,
  toolNotFound,
  toolParseError,
  toolRuntimeError,
  toolValidateError,
  type ParsedArguments,
} from '../toolset-kit/index.js';

/** The message JSON.parse gives for `text` (the error text parseToolArguments must pass through). */
function jsonParseMessage(text: string): string {
  try {
    JSON.parse(text);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error(`expected ${JSON.stringify(text)} not to be valid JSON`);
}

/** Parses and fails the test unless the arguments parse; returns the value. */
function parsed(raw: string | null): JsonValue {
  const result = parseToolArguments(raw);
  if (!result.ok) expect.fail(`expected ${JSON.stringify(raw?.slice(0, 200))} to parse, got error: ${result.error}`);
  return result.value;
}

describe('tooling', () => {
  describe('toolOk / toolError (spec §5.2)', () => {
    it('toolOk with a string output, message and brief', () => {
      const value = toolOk({ output: 'output text', message: 'This is a successful tool call.', brief: 'a brief msg for user' });
      expect(value).to.deep.equal({
        isError: false,
        output: 'output text',
        message: 'This is a successful tool call.',
        display: [{ type: 'brief', text: 'a brief msg for user' }],
      });
      expect(value).to.not.have.property('extras');
    });

    it('toolError with message, brief and output', () => {
      const value = toolError({ message: 'This is a failed tool call.', brief: 'a brief error msg for user', output: 'error output text' });
      expect(value).to.deep.equal({
        isError: true,
        output: 'error output text',
        message: 'This is a failed tool call.',
        display: [{ type: 'brief', text: 'a brief error msg for user' }],
      });
      expect(value).to.not.have.property('extras');
    });

    it('toolOk with a list of content parts keeps the list as the output', () => {
      const output = [textPart('output text'), imageURLPart('https://example.com/image.png')];
      const value = toolOk({ output, message: 'This is a successful tool call.', brief: 'a brief msg for user' });
      expect(value).to.deep.equal({
        isError: false,
        output: [
          { type: 'text', text: 'output text' },
          { type: 'image_url', imageUrl: { url: 'https://example.com/image.png' } },
        ],
        message: 'This is a successful tool call.',
        display: [{ type: 'brief', text: 'a brief msg for user' }],
      });
    });

    it('wraps a single content part output in a one-element list', () => {
      const part = imageURLPart('https://example.com/image.png');
      expect(toolOk({ output: part }).output).to.deep.equal([part]);
      expect(toolError({ message: 'm', brief: 'b', output: textPart('partial') }).output).to.deep.equal([{ type: 'text', text: 'partial' }]);
    });

    it('keeps an empty list output as an empty list (not wrapped)', () => {
      expect(toolOk({ output: [] }).output).to.deep.equal([]);
    });

    it('defaults: toolOk message "" and no display without a brief; toolError output ""', () => {
      expect(toolOk({ output: '3' })).to.deep.equal({ isError: false, output: '3', message: '', display: [] });
      expect(toolOk({ output: '3', brief: '' })).to.deep.equal({ isError: false, output: '3', message: '', display: [] });
      expect(toolError({ message: 'test error', brief: '' })).to.deep.equal({ isError: true, output: '', message: 'test error', display: [] });
      expect(toolError({ message: 'test error', brief: 'Error' })).to.deep.equal({
        isError: true,
        output: '',
        message: 'test error',
        display: [{ type: 'brief', text: 'Error' }],
      });
    });

    it('carries extras when given', () => {
      expect(toolOk({ output: 'x', extras: { elapsed: 3, tags: ['a'] } })).to.deep.equal({
        isError: false,
        output: 'x',
        message: '',
        display: [],
        extras: { elapsed: 3, tags: ['a'] },
      });
      expect(toolError({ message: 'm', brief: 'b', extras: { code: 'E1' } }).extras).to.deep.equal({ code: 'E1' });
    });

    it('survives a JSON round trip unchanged', () => {
      const value = toolOk({ output: [textPart('a'), imageURLPart('https://example.com/i.png')], message: 'm', brief: 'b', extras: { k: null } });
      expect(JSON.parse(JSON.stringify(value))).to.deep.equal(value);
    });
  });

  describe('briefOf', () => {
    it('is the text of the brief block', () => {
      expect(briefOf(toolOk({ output: '', brief: 'Read 12 lines' }))).to.equal('Read 12 lines');
      expect(briefOf(toolNotFound('x'))).to.equal('Tool `x` not found');
    });

    it('is "" without a brief block', () => {
      expect(briefOf(toolOk({ output: 'x' }))).to.equal('');
      const onlyUnknown: ToolReturnValue = { isError: false, output: '', message: '', display: [{ type: 'fancy', data: { text: 'no' } }] };
      expect(briefOf(onlyUnknown)).to.equal('');
    });

    it('is the text of the FIRST brief block, skipping other blocks before it', () => {
      const value: ToolReturnValue = {
        isError: false,
        output: '',
        message: '',
        display: [
          { type: 'fancy', data: { title: 'Hello' } },
          { type: 'brief', text: 'first' },
          { type: 'brief', text: 'second' },
        ],
      };
      expect(briefOf(value)).to.equal('first');
    });

    it('ignores a text field on a block that is not a brief block', () => {
      const notes = { type: 'notes', data: null, text: 'not a brief' };
      const value: ToolReturnValue = { isError: false, output: '', message: '', display: [notes, { type: 'brief', text: 'the brief' }] };
      expect(briefOf(value)).to.equal('the brief');
      expect(briefOf({ ...value, display: [notes] })).to.equal('');
    });
  });

  describe('isToolReturnValue / isToolResult', () => {
    const values: ToolReturnValue[] = [
      toolOk({ output: 'x' }),
      toolOk({ output: [textPart('x')], message: 'm', brief: 'b', extras: { a: 1 } }),
      toolError({ message: 'm', brief: 'b' }),
      toolNotFound('t'),
    ];

    it('accepts every return value the builders make', () => {
      for (const value of values) expect(isToolReturnValue(value), JSON.stringify(value)).to.equal(true);
    });

    it('accepts a hand-written return value', () => {
      expect(isToolReturnValue({ isError: false, output: [], message: '', display: [] })).to.equal(true);
    });

    it('rejects non-objects and objects of the wrong shape', () => {
      const good = { isError: false, output: 'x', message: '', display: [] };
      const bad: unknown[] = [
        null,
        undefined,
        'ok',
        42,
        true,
        [],
        {},
        { ...good, isError: 'false' },
        { ...good, isError: undefined },
        { ...good, output: 42 },
        { ...good, output: { type: 'text', text: 'x' } },
        { ...good, output: null },
        { ...good, message: undefined },
        { ...good, message: 1 },
        { ...good, display: 'brief' },
        { ...good, display: undefined },
        { toolCallId: 'c', returnValue: good },
      ];
      for (const value of bad) expect(isToolReturnValue(value), JSON.stringify(value)).to.equal(false);
    });

    it('isToolResult accepts a call id with a return value', () => {
      for (const value of values) expect(isToolResult({ toolCallId: 'call-1', returnValue: value })).to.equal(true);
      expect(isToolResult({ toolCallId: '', returnValue: values[0] })).to.equal(true);
    });

    it('isToolResult rejects a bare return value, a bad id or a bad return value', () => {
      const bad: unknown[] = [
        null,
        undefined,
        'call-1',
        values[0],
        { toolCallId: 'call-1' },
        { returnValue: values[0] },
        { toolCallId: 1, returnValue: values[0] },
        { toolCallId: null, returnValue: values[0] },
        { toolCallId: 'call-1', returnValue: null },
        { toolCallId: 'call-1', returnValue: 'ok' },
        { toolCallId: 'call-1', returnValue: { isError: false, output: 'x', message: '' } },
      ];
      for (const value of bad) expect(isToolResult(value), JSON.stringify(value)).to.equal(false);
    });
  });

  describe('error results (spec §5.4)', () => {
    it('toolNotFound: message and brief "Tool `name` not found", empty output', () => {
      expect(toolNotFound('non_existent_tool')).to.deep.equal({
        isError: true,
        output: '',
        message: 'Tool `non_existent_tool` not found',
        display: [{ type: 'brief', text: 'Tool `non_existent_tool` not found' }],
      });
    });

    it('toolParseError: "Error parsing JSON arguments: …" / "Invalid arguments"', () => {
      expect(toolParseError('Unexpected token')).to.deep.equal({
        isError: true,
        output: '',
        message: 'Error parsing JSON arguments: Unexpected token',
        display: [{ type: 'brief', text: 'Invalid arguments' }],
      });
    });

    it('toolParseError with the error of parseToolArguments keeps the parser text after the prefix', () => {
      const raw = '{"a": 1, b: 2}';
      const result = parseToolArguments(raw);
      expect(result.ok).to.equal(false);
      const detail = (result as { error: string }).error;
      expect(toolParseError(detail).message).to.equal(`Error parsing JSON arguments: ${jsonParseMessage(raw)}`);
    });

    it('toolValidateError: "Error validating JSON arguments: …" / "Invalid arguments"', () => {
      expect(toolValidateError("'b' is a required property")).to.deep.equal({
        isError: true,
        output: '',
        message: "Error validating JSON arguments: 'b' is a required property",
        display: [{ type: 'brief', text: 'Invalid arguments' }],
      });
    });

    it('toolRuntimeError: "Error running tool: …" / "Tool runtime error"', () => {
      expect(toolRuntimeError('division by zero')).to.deep.equal({
        isError: true,
        output: '',
        message: 'Error running tool: division by zero',
        display: [{ type: 'brief', text: 'Tool runtime error' }],
      });
    });

    it('toolInvalidReturn: "Invalid return type: …" / "Invalid return type"', () => {
      expect(toolInvalidReturn('string')).to.deep.equal({
        isError: true,
        output: '',
        message: 'Invalid return type: string',
        display: [{ type: 'brief', text: 'Invalid return type' }],
      });
    });

    it('toolNotExecuted: "Tool call was not executed: …" / "Not executed"', () => {
      expect(toolNotExecuted('the response was cut off')).to.deep.equal({
        isError: true,
        output: '',
        message: 'Tool call was not executed: the response was cut off',
        display: [{ type: 'brief', text: 'Not executed' }],
      });
    });

    it('every error result is recognised as a return value and has a brief', () => {
      for (const value of [toolNotFound('x'), toolParseError('d'), toolValidateError('d'), toolRuntimeError('d'), toolInvalidReturn('d'), toolNotExecuted('d')]) {
        expect(isToolReturnValue(value)).to.equal(true);
        expect(value.isError).to.equal(true);
        expect(briefOf(value)).to.not.equal('');
      }
    });
  });

  describe('toolCancelled', () => {
    it('is the one text every toolset gives for a call its step aborted', () => {
      expect(toolCancelled('slow', new Error('user pressed stop'))).to.deep.equal(
        toolError({ message: 'Tool `slow` was cancelled: user pressed stop', brief: 'Cancelled' }),
      );
    });
  });

  describe('describeError', () => {
    it('is the message of an Error (of any subclass)', () => {
      expect(describeError(new Error('division by zero'))).to.equal('division by zero');
      expect(describeError(new TypeError('x is not a function'))).to.equal('x is not a function');
      expect(describeError(new DOMException('The operation was aborted', 'AbortError'))).to.equal('The operation was aborted');
    });

    it('is the name of an Error without a message', () => {
      expect(describeError(new Error())).to.equal('Error');
      expect(describeError(new RangeError(''))).to.equal('RangeError');
    });

    it('is a thrown string itself', () => {
      expect(describeError('plain failure')).to.equal('plain failure');
      expect(describeError('')).to.equal('');
    });

    it('is the JSON of a thrown object or other value', () => {
      expect(describeError({ code: 'E42', detail: ['a', 1] })).to.equal('{"code":"E42","detail":["a",1]}');
      expect(describeError(42)).to.equal('42');
      expect(describeError(null)).to.equal('null');
      expect(describeError([1, 'two'])).to.equal('[1,"two"]');
    });

    it('falls back to String() for values JSON cannot express', () => {
      expect(describeError(undefined)).to.equal('undefined');
      expect(describeError(10n)).to.equal('10');
      expect(describeError(Symbol('gone'))).to.equal('Symbol(gone)');
    });

    it('does not throw on a circular object', () => {
      const circular: Record<string, unknown> = { name: 'loop' };
      circular.self = circular;
      expect(describeError(circular)).to.equal('[object Object]');
    });

    it('does not throw on a circular object without a prototype (String() of it throws)', () => {
      const bare = Object.create(null) as Record<string, unknown>;
      bare.self = bare;
      expect(describeError(bare)).to.equal('[object Object]');
    });

    it('describes an error from another realm by its message', async () => {
      const { runInNewContext } = await import('node:vm');
      const foreign: unknown = runInNewContext('new TypeError("from elsewhere")');
      expect(foreign instanceof Error).to.equal(false);
      expect(describeError(foreign)).to.equal('from elsewhere');
    });
  });

  describe('emptyToolset', () => {
    it('has no tools', () => {
      expect(emptyToolset.tools).to.deep.equal([]);
    });

    it('answers every call with a not-found result tagged with the call id', async () => {
      const call = toolCall('call-7', 'get_weather', '{"city": "Beijing"}');
      const context: ToolContext = { signal: new AbortController().signal, toolCall: call, stepId: 'step-1' };
      const result = await emptyToolset.handle(call, context);
      expect(result).to.deep.equal({ toolCallId: 'call-7', returnValue: toolNotFound('get_weather') });
      expect(result.returnValue.message).to.equal('Tool `get_weather` not found');
      expect(isToolResult(result)).to.equal(true);
    });
  });

  describe('parseToolArguments', () => {
    it('treats null and "" as {}', () => {
      expect(parseToolArguments(null)).to.deep.equal({ ok: true, value: {} });
      expect(parseToolArguments('')).to.deep.equal({ ok: true, value: {} });
    });

    it('parses valid JSON objects, arrays and scalars', () => {
      expect(parseToolArguments('{"a": 1, "b": 2}')).to.deep.equal({ ok: true, value: { a: 1, b: 2 } });
      expect(parsed('{"city":"Beijing","days":[1,2.5,-3e2],"opts":{"x":null,"y":true}}')).to.deep.equal({
        city: 'Beijing',
        days: [1, 2.5, -300],
        opts: { x: null, y: true },
      });
      expect(parsed('["a", "b"]')).to.deep.equal(['a', 'b']);
      expect(parsed('1')).to.equal(1);
      expect(parsed('"text"')).to.equal('text');
      expect(parsed('true')).to.equal(true);
      expect(parseToolArguments('null')).to.deep.equal({ ok: true, value: null });
      expect(parsed(' \n\t{"a": "b"}\r\n ')).to.deep.equal({ a: 'b' });
      expect(parsed('{"s": "tab\\there \\u00e9 \\"q\\" \\\\"}')).to.deep.equal({ s: 'tab\there é "q" \\' });
    });

    it('accepts raw newlines and tabs inside strings and preserves them', () => {
      expect(parseToolArguments('{"text": "line1\nline2\tend"}')).to.deep.equal({ ok: true, value: { text: 'line1\nline2\tend' } });
      expect(parsed('{"code": "def f():\n\treturn 1\r\n"}')).to.deep.equal({ code: 'def f():\n\treturn 1\r\n' });
    });

    it('accepts every other raw control character U+0000–U+001F inside strings, value preserved', () => {
      for (let code = 0; code < 0x20; code++) {
        const ch = String.fromCharCode(code);
        expect(parsed(`{"v": "a${ch}b"}`), `U+${code.toString(16).padStart(4, '0')}`).to.deep.equal({ v: `a${ch}b` });
      }
      let all = '';
      for (let code = 0; code < 0x20; code++) all += String.fromCharCode(code);
      expect(parsed(`["${all}", {"${all}": "${all}"}]`)).to.deep.equal([all, { [all]: all }]);
    });

    it('accepts raw control characters in keys, in nested values and in several strings', () => {
      expect(parsed('{"a\nb": ["x\ty", {"c": "\u0001"}], "d": "\u001f"}')).to.deep.equal({ 'a\nb': ['x\ty', { c: '\u0001' }], d: '\u001f' });
    });

    it('handles an escaped quote next to raw control characters', () => {
      // JSON text: {"a": "say \"hi\"<LF>", "b": "<TAB>\"x"}
      expect(parsed('{"a": "say \\"hi\\"\n", "b": "\t\\"x"}')).to.deep.equal({ a: 'say "hi"\n', b: '\t"x' });
    });

    it('handles an escaped backslash next to raw control characters', () => {
      // JSON text: {"a": "C:\\<LF>dir"}  -> backslash, newline, "dir"
      expect(parsed('{"a": "C:\\\\\ndir"}')).to.deep.equal({ a: 'C:\\\ndir' });
      // An escaped backslash right before the closing quote must end the string: the LF after the comma is
      // whitespace between members, and the tab is inside the next string.
      // JSON text: {"a":"end\\",<LF>"b":"t<TAB>t"}
      expect(parsed('{"a":"end\\\\",\n"b":"t\tt"}')).to.deep.equal({ a: 'end\\', b: 't\tt' });
      // A \u0022 escape is a quote character, not the end of the string.
      expect(parsed('{"a":"\\u0022\n"}')).to.deep.equal({ a: '"\n' });
    });

    it('still rejects control characters outside strings, with the error of the original text', () => {
      for (const raw of ['{"a": 1,\u0001"b": 2}', '\u0000{"a": 1}', '[1,\u001f2]', '{"a": "x\ny"\u0001}', '{"a": "x"}\u0007']) {
        expect(parseToolArguments(raw), JSON.stringify(raw)).to.deep.equal({ ok: false, error: jsonParseMessage(raw) });
      }
    });

    it('still rejects a backslash followed by a raw control character (not a valid escape)', () => {
      const raw = '{"a": "x\\\ny"}'; // JSON text: {"a": "x\<LF>y"}
      expect(parseToolArguments(raw)).to.deep.equal({ ok: false, error: jsonParseMessage(raw) });
    });

    it('reports invalid JSON as {ok: false, error} with the JSON.parse message', () => {
      for (const raw of ['{"a": 1, b: 2}', '{"a": ', 'not json', '{"a": 1}}', "{'a': 1}", '   ', '{"a": "unterminated\n']) {
        const result = parseToolArguments(raw);
        expect(result, JSON.stringify(raw)).to.deep.equal({ ok: false, error: jsonParseMessage(raw) });
        expect((result as { error: string }).error).to.be.a('string').and.not.equal('');
      }
    });

    it('keeps "__proto__" as an own property and never touches Object.prototype', () => {
      for (const raw of ['{"__proto__": {"polluted": 1}}', '{"__proto__": {"polluted": 1}, "s": "raw\nnewline"}']) {
        const value = parsed(raw) as Record<string, unknown>;
        expect(Object.getPrototypeOf(value), raw).to.equal(Object.prototype);
        expect(Object.prototype.hasOwnProperty.call(value, '__proto__'), raw).to.equal(true);
        expect(Object.getOwnPropertyDescriptor(value, '__proto__')?.value, raw).to.deep.equal({ polluted: 1 });
        expect(value.polluted, raw).to.equal(undefined);
        expect(({} as Record<string, unknown>).polluted, raw).to.equal(undefined);
        expect(Object.prototype).to.not.have.own.property('polluted');
      }
      const nested = parsed('{"a": {"constructor": {"prototype": {"polluted": 1}}}}') as { a: Record<string, unknown> };
      expect(Object.prototype.hasOwnProperty.call(nested.a, 'constructor')).to.equal(true);
      expect(({} as Record<string, unknown>).polluted).to.equal(undefined);
    });

    it('parses a ~10 MB argument string', () => {
      const content = 'x'.repeat(10 * 1024 * 1024);
      const value = parsed(`{"path": "big.txt", "content": "${content}"}`) as { path: string; content: string };
      expect(value.path).to.equal('big.txt');
      expect(value.content.length).to.equal(content.length);
      expect(value.content === content).to.equal(true);
    });

    it('an unterminated string full of \\" (256 KB): one linear scan, the parse error of the text (the repair was quadratic)', () => {
      // Before: a backtracking regular expression rescanned from every quote; 120 KB blocked the event loop for 8.8 s.
      for (const raw of [`{"s":"${'\\"'.repeat(128 * 1024)}`, `{"s":"\n${'\\"'.repeat(128 * 1024)}`]) {
        expect(parseToolArguments(raw)).to.deep.equal({ ok: false, error: jsonParseMessage(raw) });
      }
    });

    it('10 MB of invalid escapes after an open string: an error result, not a RangeError (stack overflow)', () => {
      const raw = `{"s":"${'\\a'.repeat(5 * 1024 * 1024)}`;
      expect(parseToolArguments(raw)).to.deep.equal({ ok: false, error: jsonParseMessage(raw) });
      const terminated = `{"s":"\n${'\\a'.repeat(5 * 1024 * 1024)}"}`;
      expect(parseToolArguments(terminated)).to.deep.equal({ ok: false, error: jsonParseMessage(terminated) });
    });

    it('refuses arguments longer than the bound without parsing them (maxLength, MAX_TOOL_ARGUMENTS_LENGTH by default)', () => {
      expect(parseToolArguments('{"a": "12345"}', { maxLength: 10 })).to.deep.equal({
        ok: false,
        error: 'the arguments are 14 characters long, more than the limit of 10',
      });
      expect(parseToolArguments('{"a": 1}', { maxLength: 8 })).to.deep.equal({ ok: true, value: { a: 1 } });
      const tooLong = ' '.repeat(MAX_TOOL_ARGUMENTS_LENGTH + 1);
      expect(parseToolArguments(tooLong)).to.deep.equal({
        ok: false,
        error: `the arguments are ${MAX_TOOL_ARGUMENTS_LENGTH + 1} characters long, more than the limit of ${MAX_TOOL_ARGUMENTS_LENGTH}`,
      });
    });

    it('property: the one-scan repair gives what the regular-expression repair gave, and never throws', () => {
      // The repair before (correct on small texts, quadratic or stack-exhausting on hostile large ones), as the oracle.
      const reference = (raw: string): ParsedArguments => {
        try {
          return { ok: true, value: JSON.parse(raw) as JsonValue };
        } catch (error) {
          // eslint-disable-next-line no-control-regex -- control characters are exactly what this escapes
          const escaped = raw.replace(/"[^"\\]*(?:\\[\s\S][^"\\]*)*"/g, (literal) => literal.replace(/\\[\s\S]|[\u0000-\u001f]/g, (m) => (m.length === 2 ? m : `\\u${m.charCodeAt(0).toString(16).padStart(4, '0')}`)));
          try {
            if (escaped !== raw) return { ok: true, value: JSON.parse(escaped) as JsonValue };
          } catch {
            // the error of the original text
          }
          return { ok: false, error: (error as Error).message };
        }
      };
      const piece = fc.constantFrom('"', '\\', '\\"', '\n', '\t', '\u0000', '\u001f', '{', '}', '[', ']', ':', ',', 'a', '1', ' ', '"k"', 'true', '\\u00', '\\n');
      fc.assert(
        fc.property(fc.array(piece, { maxLength: 24 }), (pieces) => {
          const raw = pieces.join('');
          expect(parseToolArguments(raw), JSON.stringify(raw)).to.deep.equal(raw === '' ? { ok: true, value: {} } : reference(raw));
        }),
        { numRuns: 3000 },
      );
      // Texts that do parse once repaired.
      fc.assert(
        fc.property(fc.jsonValue({ maxDepth: 3 }), fc.constantFrom('\n', '\t', '\r', '\u0001'), (value, control) => {
          const raw = JSON.stringify(value).replace(/\\n/g, control);
          expect(parseToolArguments(raw), JSON.stringify(raw)).to.deep.equal(reference(raw));
        }),
        { numRuns: 500 },
      );
    });

    it('parses a ~10 MB argument string with raw newlines inside (the tolerant path)', () => {
      const content = `${'y'.repeat(1023)}\n`.repeat(10 * 1024);
      const value = parsed(`{"content": "${content}"}`) as { content: string };
      expect(value.content.length).to.equal(10 * 1024 * 1024);
      expect(value.content === content).to.equal(true);
    });
  });
});
