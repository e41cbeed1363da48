import { ChatProviderError } from '@kosong/core';

import { pythonStringRepr } from './python-repr.js';

const ECHO_SCRIPT_ERROR = Symbol.for('kosong.error.EchoScriptError');

/**
 * An echo DSL script that cannot be parsed. The message names the line number and quotes the line
 * (kosong spec §8.2 texts); {@link EchoScriptError.lineNumber} and {@link EchoScriptError.line} give
 * them as data. Simulated provider errors (`error:` directives) are not of this class.
 */
export class EchoScriptError extends ChatProviderError {
  /** The 1-based number of the offending line. */
  readonly lineNumber: number;
  /** The offending line, as written (not trimmed). */
  readonly line: string;

  constructor(message: string, lineNumber: number, line: string) {
    super(message);
    this.lineNumber = lineNumber;
    this.line = line;
    Object.defineProperty(this, ECHO_SCRIPT_ERROR, { value: true, enumerable: false });
  }

  /**
   * An error whose text does not say where it happened: ` (line N: 'the line')` is appended, e.g.
   * `usage payload cannot be empty. (line 3: 'usage:')`.
   */
  static at(line: ScriptLine, text: string): EchoScriptError {
    return new EchoScriptError(`${text} (line ${line.number}: ${pythonStringRepr(line.raw)})`, line.number, line.raw);
  }

  /** An error whose text already names the line number (and perhaps the line). */
  static withText(line: ScriptLine, text: string): EchoScriptError {
    return new EchoScriptError(text, line.number, line.raw);
  }

  /** Whether `error` is an {@link EchoScriptError} (of any copy of this package). */
  static override isInstance(error: unknown): error is EchoScriptError {
    return typeof error === 'object' && error !== null && (error as Record<symbol, unknown>)[ECHO_SCRIPT_ERROR] === true;
  }
}

/** A line of an echo script, for error messages. */
export interface ScriptLine {
  /** 1-based line number. */
  readonly number: number;
  /** The line as written (not trimmed). */
  readonly raw: string;
}
