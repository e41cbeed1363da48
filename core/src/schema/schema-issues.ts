import type { ErrorObject } from 'ajv';

/** One reason why a value does not match a schema: where (the path of the value from the root) and what. */
export interface SchemaIssue {
  /** Keys and array indexes from the root to the offending value (`[]`: the root itself). */
  readonly path: readonly (string | number)[];
  readonly message: string;
}

/** How many issues {@link formatIssues} lists before it says how many more there are. */
export const MAX_LISTED_ISSUES = 20;

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/**
 * A readable JSON path: `users[0].address.city`, `["odd key"]`, or `(root)` for the root itself.
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
 * One line per issue (`path: message`), at most {@link MAX_LISTED_ISSUES} lines, then a line saying
 * how many more issues there are; `none` when there are no issues.
 */
export function formatIssues(issues: readonly SchemaIssue[], none = 'the arguments do not match the schema'): string {
  if (issues.length === 0) return none;
  const lines = issues.slice(0, MAX_LISTED_ISSUES).map((issue) => `${formatJsonPath(issue.path)}: ${issue.message}`);
  const more = issues.length - MAX_LISTED_ISSUES;
  if (more > 0) lines.push(`… and ${more} more issue${more === 1 ? '' : 's'}`);
  return lines.join('\n');
}

/** Ajv errors as schema issues, pointing at the offending key where ajv points at its parent. */
export function ajvIssues(errors: readonly ErrorObject[]): SchemaIssue[] {
  return errors.map((error) => {
    const path = jsonPointerSegments(error.instancePath);
    const params = error.params as Record<string, unknown>;
    switch (error.keyword) {
      case 'required':
        return { path: [...path, String(params['missingProperty'])], message: 'Missing required property' };
      case 'additionalProperties':
        return { path: [...path, String(params['additionalProperty'])], message: 'Unrecognized key' };
      case 'unevaluatedProperties':
        return { path: [...path, String(params['unevaluatedProperty'])], message: 'Unrecognized key' };
      case 'enum': {
        const allowed = Array.isArray(params['allowedValues']) ? params['allowedValues'].map((value) => JSON.stringify(value)).join(', ') : '';
        return { path, message: `${error.message ?? 'must be one of the allowed values'}: ${allowed}` };
      }
      default:
        return { path, message: error.message ?? `fails "${error.keyword}"` };
    }
  });
}

/** The segments of a JSON Pointer (`/items/0/name` → `['items', 0, 'name']`). */
export function jsonPointerSegments(pointer: string): (string | number)[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((segment) => {
      const key = segment.replace(/~1/g, '/').replace(/~0/g, '~');
      return /^(0|[1-9]\d*)$/.test(key) ? Number(key) : key;
    });
}
