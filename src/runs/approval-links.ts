import { createHmac, timingSafeEqual } from 'node:crypto';
import { AppError, ErrorCode } from '../common/app-error';
import type { SecretCipher } from '../common/secret-cipher';

/** Where approval pages live, under the public URL. */
export const APPROVAL_PAGE_PATH = '/approvals';

/** What a link decides: one approval node of one run, until its wait ends. */
export interface ApprovalClaim {
  runId: string;
  nodeId: string;
  expiresAt: Date;
}

/**
 * Signed approval links: `<public url>/approvals/<payload>.<signature>`, the payload naming the
 * run, the node and when the link expires, the signature an HMAC-SHA256 under a key derived from
 * the secrets key (so links survive restarts and work on every instance sharing it). A link is
 * one-time because the decision it takes is recorded on the step (see ApprovalsService): the
 * signature only says who made the link.
 */
export class ApprovalLinks {
  private readonly key: Buffer;

  constructor(
    cipher: SecretCipher,
    private readonly publicUrl: string,
  ) {
    this.key = cipher.deriveKey('approval-links');
  }

  url(claim: ApprovalClaim): string {
    return `${this.publicUrl}${APPROVAL_PAGE_PATH}/${this.token(claim)}`;
  }

  token(claim: ApprovalClaim): string {
    const payload = Buffer.from(JSON.stringify({ r: claim.runId, n: claim.nodeId, e: claim.expiresAt.getTime() })).toString('base64url');
    return `${payload}.${this.sign(payload)}`;
  }

  /**
   * The claim of a link this service made; NOT_FOUND for anything else (a forged or mangled
   * link says nothing more), GONE once it expired.
   */
  read(token: string, now = new Date()): ApprovalClaim {
    const unknown = new AppError(ErrorCode.NOT_FOUND, 'This approval link is not valid: check that it was copied whole');
    const [payload, signature, extra] = token.split('.');
    if (!payload || !signature || extra !== undefined || token.length > 2048) throw unknown;
    const expected = Buffer.from(this.sign(payload));
    const given = Buffer.from(signature);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw unknown;
    let decoded: { r?: unknown; n?: unknown; e?: unknown };
    try {
      decoded = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as typeof decoded;
    } catch {
      throw unknown;
    }
    if (typeof decoded.r !== 'string' || typeof decoded.n !== 'string' || typeof decoded.e !== 'number') throw unknown;
    const claim = { runId: decoded.r, nodeId: decoded.n, expiresAt: new Date(decoded.e) };
    if (claim.expiresAt <= now) {
      throw new AppError(
        ErrorCode.GONE,
        `This approval link expired at ${claim.expiresAt.toISOString()}: the run went on without a decision`,
        {
          details: { runId: claim.runId, nodeId: claim.nodeId, expiresAt: claim.expiresAt.toISOString() },
        },
      );
    }
    return claim;
  }

  private sign(payload: string): string {
    return createHmac('sha256', this.key).update(payload).digest('base64url');
  }
}
