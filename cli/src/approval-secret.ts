/**
 * The approval secret of `kosong worker` and `kosong --redis`: `KOSONG_APPROVAL_SECRET`, the same in
 * every worker and every submitter of one Redis, never stored in Redis (see `@kosong/bullmq`,
 * "Trust"). Bash calls a worker defers are approved by decisions signed with it.
 *
 * @module
 */

/** The environment variable. */
export const APPROVAL_SECRET_VARIABLE = 'KOSONG_APPROVAL_SECRET';

/** The shortest secret accepted, in bytes (`@kosong/bullmq`'s `MIN_SECRET_BYTES`). */
const MIN_BYTES = 16;

/** What `kosong worker` says at start when it defers bash calls without a secret. */
export const UNSIGNED_APPROVALS_WARNING =
  `${APPROVAL_SECRET_VARIABLE} is not set: bash calls wait for approvals that are not signed, so anyone who can write to this Redis can approve them. ` +
  `Set it (e.g. to the output of \`openssl rand -hex 32\`) for this worker and every \`kosong --redis\`, or pass --allow-bash`;

/**
 * The secret from the environment (`undefined` when unset or empty).
 * @throws Error naming the variable when it is shorter than 16 bytes.
 */
export function approvalSecretFrom(env: Readonly<Record<string, string | undefined>>): string | undefined {
  const secret = env[APPROVAL_SECRET_VARIABLE];
  if (secret === undefined || secret === '') return undefined;
  if (Buffer.byteLength(secret, 'utf8') < MIN_BYTES) throw new Error(`${APPROVAL_SECRET_VARIABLE} must be at least ${MIN_BYTES} bytes long (e.g. the output of \`openssl rand -hex 32\`)`);
  return secret;
}
