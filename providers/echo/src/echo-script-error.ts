import { ChatProviderError, errorMarker, hasErrorMarker, markError } from '@kosong/core/provider-kit';

import { pythonStringRepr } from './python-repr.js';

const ECHO_SCRIPT_ERROR = errorMarker('EchoScriptError');

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
    markError(this, ECHO_SCRIPT_ERROR);
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
    return hasErrorMarker(error, ECHO_SCRIPT_ERROR);
  }
}

/** A line of an echo script, for error messages. */
export interface ScriptLine {
  /** 1-based line number. */
  readonly number: number;
  /** The line as written (not trimmed). */
  readonly raw: string;
}
