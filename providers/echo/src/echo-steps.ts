import { LINE_BREAK } from './echo-dsl.js';

/** One step of an echo script: the lines between `---` separator lines. */
export interface EchoScriptStep {
  /** The step's lines, joined with `\n`: an echo script of its own. */
  readonly script: string;
  /** The number, in the whole script, of the step's first line (from 1), for error messages. */
  readonly firstLine: number;
}

/** The line (once trimmed) that separates the steps of an echo script. */
export const ECHO_STEP_SEPARATOR = '---';

/**
 * Splits an echo script into the responses of consecutive steps, at lines that are just `---`: the
 * first step of a turn plays the first part, the step after the model's first answer (its tool
 * calls run) the second, and so on. A script without a separator is one step, as it was written.
 *
 * @example
 * splitEchoSteps('tool_call: {"id": "c1", "name": "ls", "arguments": "{}"}\n---\ntext: Done.')
 * // [{ script: 'tool_call: …', firstLine: 1 }, { script: 'text: Done.', firstLine: 3 }]
 */
export function splitEchoSteps(script: string): EchoScriptStep[] {
  const steps: EchoScriptStep[] = [];
  let lines: string[] = [];
  let firstLine = 1;
  script.split(LINE_BREAK).forEach((line, index) => {
    if (line.trim() !== ECHO_STEP_SEPARATOR) {
      lines.push(line);
      return;
    }
    steps.push({ script: lines.join('\n'), firstLine });
    lines = [];
    firstLine = index + 2;
  });
  // One step: the script as it was written (line breaks included).
  if (steps.length === 0) return [{ script, firstLine: 1 }];
  steps.push({ script: lines.join('\n'), firstLine });
  return steps;
}
