import type { ValidationIssue } from './callable-tool.js';

/** How many issues an error result lists before it says how many more there are. */
export const MAX_LISTED_ISSUES = 20;

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/**
 * A readable JSON path: `users[0].address.city`, `["odd key"]`, or `(root)` for the arguments themselves.
 */
export function formatJsonPath(path: readonly (string | number)[]): string {
  if (path.length === 0) return '(root)';
  let text = '';
  for (const segment of path) {
    if (typeof segment === 'number') text += `[${segment}]`;
    else if (IDENTIFIER.test(segment)) text += text === '' ? segment : `.${segment}`;
    else text += `[${JSON.stringify(segment)}]`;
  }
  return text;
}

/**
 * The detail of a validation error result: one line per issue (`path: message`), at most
 * {@link MAX_LISTED_ISSUES} lines, then a line saying how many more issues there are.
 */
export function formatIssues(issues: readonly ValidationIssue[]): string {
  if (issues.length === 0) return 'the arguments do not match the schema';
  const lines = issues.slice(0, MAX_LISTED_ISSUES).map((issue) => `${formatJsonPath(issue.path)}: ${issue.message}`);
  const more = issues.length - MAX_LISTED_ISSUES;
  if (more > 0) lines.push(`… and ${more} more issue${more === 1 ? '' : 's'}`);
  return lines.join('\n');
}
