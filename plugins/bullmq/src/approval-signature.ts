/**
 * Signed approval decisions: Redis is readable and writable by every submitter and worker, so a
 * decision read from a job there proves nothing about who made it. With an approval secret — given
 * to the submitters ({@link TurnQueue}) and the agent workers, never stored in Redis — a resumption
 * carries an HMAC-SHA256 over what it decides, and a worker runs no call on a decision the secret
 * did not sign.
 *
 * @module
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { ApprovalDecision, PendingStep, ToolCall } from '@kosong/core';
import { ApprovalSignatureError } from './errors.js';

/** An approval secret: a string (its UTF-8 bytes) or bytes, at least {@link MIN_SECRET_BYTES} long. */
export type ApprovalSecret = string | Uint8Array;

/**
 * The `approvalSecret` option of `TurnQueue` and `AgentWorker`: one secret for every tenant, or one
 * per tenant (`undefined` for a tenant: its decisions cannot be signed, and a worker refuses them).
 */
export type ApprovalSecretOption = ApprovalSecret | ((tenant: string | undefined) => ApprovalSecret | undefined);

/** The shortest secret accepted (a secret is a key: `openssl rand -hex 32` makes a good one). */
export const MIN_SECRET_BYTES = 16;

/** How long a signature is good for, by default: long enough to wait behind the session's earlier turns. */
export const DEFAULT_APPROVAL_MAX_AGE_MS = 3_600_000;

/** How far in the future a signature's time may be (the clocks of submitter and worker differ). */
const CLOCK_SKEW_MS = 300_000;

/** What a signature is made over, after this line (domain separation: the secret signs nothing else). */
const DOMAIN = 'kosong-approval-v1\n';

/** A resumption's signature, as its job carries it. @internal */
export interface SignedDecisions {
  /** The JSON of a {@link SignedPayload}, as it was signed. */
  readonly payload: string;
  /** HMAC-SHA256 of `DOMAIN + payload` with the secret, base64url. */
  readonly signature: string;
}

/** What a signature says. @internal */
interface SignedPayload {
  readonly v: 1;
  readonly tenant: string | null;
  readonly session: string;
  /** The resumption's turn id (its job's): the signature is good for that one job. */
  readonly turn: string;
  /** The id of the step whose calls wait (a random id per step: no other step has it). */
  readonly step: string;
  /** When it was signed (ms since the epoch). */
  readonly issuedAt: number;
  /** Each decision: call id, decision, the call's tool and the SHA-256 of its arguments as the submitter saw them. */
  readonly decisions: readonly (readonly [id: string, decision: ApprovalDecision, tool: string, argumentsSha256: string])[];
}

/** The call a decision is about, as the submitter was shown it. */
export interface SignedCall {
  readonly id: string;
  readonly name: string;
  readonly arguments: string | null;
}

/**
 * The secret for a tenant from the option.
 * @throws TypeError for a secret that is neither a string nor bytes, or shorter than {@link MIN_SECRET_BYTES}.
 */
export function secretFor(option: ApprovalSecretOption | undefined, tenant: string | undefined, owner: string): Buffer | undefined {
  if (option === undefined) return undefined;
  const secret = typeof option === 'function' ? option(tenant) : option;
  return secret === undefined ? undefined : checkSecret(secret, owner);
}

/**
 * Checks the `approvalSecret` option when a queue or worker is made (a function is checked when it is asked).
 * @throws TypeError naming the owner.
 */
export function checkSecretOption(option: unknown, owner: string): ApprovalSecretOption | undefined {
  if (option === undefined || typeof option === 'function') return option as ApprovalSecretOption | undefined;
  checkSecret(option, owner);
  return option as ApprovalSecret;
}

function checkSecret(secret: unknown, owner: string): Buffer {
  if (typeof secret !== 'string' && !(secret instanceof Uint8Array)) throw new TypeError(`${owner}: approvalSecret must be a string or bytes`);
  const bytes = typeof secret === 'string' ? Buffer.from(secret, 'utf8') : Buffer.from(secret);
  if (bytes.length < MIN_SECRET_BYTES) throw new TypeError(`${owner}: approvalSecret must be at least ${MIN_SECRET_BYTES} bytes long (got ${bytes.length})`);
  return bytes;
}

/** Signs a resumption's decisions. @internal */
export function signDecisions(
  secret: Buffer,
  what: {
    readonly tenant: string | undefined;
    readonly session: string;
    readonly turnId: string;
    readonly stepId: string;
    readonly decisions: Readonly<Record<string, ApprovalDecision>>;
    readonly calls: readonly SignedCall[];
  },
  now = Date.now(),
): SignedDecisions {
  const decisions = Object.entries(what.decisions).map(([id, decision]) => {
    const call = what.calls.find((c) => c.id === id);
    if (!call) throw new TypeError(`no call with id "${id}" is among the calls shown as waiting`);
    return [id, plainDecision(decision), call.name, sha256(call.arguments)] as const;
  });
  const payload: SignedPayload = { v: 1, tenant: what.tenant ?? null, session: what.session, turn: what.turnId, step: what.stepId, issuedAt: now, decisions };
  const text = JSON.stringify(payload);
  return { payload: text, signature: mac(secret, text) };
}

/**
 * Checks that `signed` is the secret's signature of exactly these decisions, for this tenant,
 * session and resumption, about calls of the step that waits (with the arguments they have there).
 *
 * @throws ApprovalSignatureError saying what does not hold; nothing of the step may then run.
 */
export function verifyDecisions(
  secret: Buffer | undefined,
  signed: unknown,
  what: {
    readonly tenant: string | undefined;
    readonly session: string;
    readonly turnId: string;
    readonly pending: PendingStep;
    readonly decisions: Readonly<Record<string, ApprovalDecision>>;
    readonly maxAgeMs: number;
  },
  now = Date.now(),
): void {
  const where = `Turn ${what.turnId} (session "${what.session}"${what.tenant === undefined ? '' : ` of tenant "${what.tenant}"`})`;
  const refuse = (why: string): never => {
    throw new ApprovalSignatureError(`${where}: the approval decisions are refused, ${why}; nothing was run, the calls still wait for approval`);
  };
  if (secret === undefined) refuse('this worker has no approval secret for the tenant');
  if (typeof signed !== 'object' || signed === null) refuse('they are not signed (the submitter\'s TurnQueue has no approvalSecret)');
  const { payload, signature } = signed as { payload?: unknown; signature?: unknown };
  if (typeof payload !== 'string' || typeof signature !== 'string') refuse('their signature is malformed');
  const expected = Buffer.from(mac(secret!, payload as string));
  const given = Buffer.from(signature as string);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) refuse('their signature is not the approval secret\'s');
  // Signed with the secret: what it says is the submitter's word. Does it say this?
  let claim: SignedPayload;
  try {
    claim = JSON.parse(payload as string) as SignedPayload;
  } catch {
    return refuse('their signed payload is not JSON');
  }
  if (claim?.v !== 1 || !Array.isArray(claim.decisions)) refuse(`the signature is of an unknown version (${String(claim?.v)})`);
  if (claim.tenant !== (what.tenant ?? null) || claim.session !== what.session) refuse('they were signed for another session');
  if (claim.turn !== what.turnId) refuse('they were signed for another resumption (a signature is good for one job)');
  if (claim.step !== what.pending.stepId) refuse(`they were signed for step ${claim.step}, and step ${what.pending.stepId} waits`);
  if (!(now - claim.issuedAt <= what.maxAgeMs && claim.issuedAt - now <= CLOCK_SKEW_MS)) refuse(`they were signed at ${new Date(claim.issuedAt).toISOString()}, which is not within ${what.maxAgeMs} ms of now`);
  const ids = Object.keys(what.decisions);
  if (ids.length !== claim.decisions.length) refuse('they are not the decisions that were signed');
  const calls: readonly ToolCall[] = what.pending.message.toolCalls ?? [];
  for (const [id, decision, tool, argumentsSha256] of claim.decisions) {
    if (!Object.hasOwn(what.decisions, id) || !sameDecision(what.decisions[id]!, decision)) refuse(`the decision about "${id}" is not the one that was signed`);
    const call = calls.find((c) => c.id === id);
    if (!call) refuse(`the call "${id}" they were signed for is not in the waiting step`);
    if (call!.function.name !== tool || sha256(call!.function.arguments) !== argumentsSha256) {
      refuse(`the call "${id}" in the waiting step is not the one that was approved (its tool or arguments changed in Redis)`);
    }
  }
}

/** The calls of a step's pending approvals, as a submitter signs them. */
export function callsOf(toolCalls: readonly ToolCall[]): SignedCall[] {
  return toolCalls.map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments }));
}

function mac(secret: Buffer, payload: string): string {
  return createHmac('sha256', secret).update(DOMAIN).update(payload).digest('base64url');
}

function sha256(text: string | null | undefined): string {
  return createHash('sha256')
    .update(text ?? '')
    .digest('hex');
}

/** The decision's own fields only (whatever else the object has is not signed, nor used). */
function plainDecision(decision: ApprovalDecision): ApprovalDecision {
  return decision.type === 'deny' && decision.reason !== undefined ? { type: 'deny', reason: decision.reason } : { type: decision.type };
}

function sameDecision(a: ApprovalDecision, b: ApprovalDecision): boolean {
  const x = plainDecision(a);
  const y = plainDecision(b as ApprovalDecision);
  return x.type === y.type && (x as { reason?: string }).reason === (y as { reason?: string }).reason;
}
