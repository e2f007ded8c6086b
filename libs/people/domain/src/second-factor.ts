import { createCipheriv, createDecipheriv, hkdfSync, randomBytes, randomInt } from 'crypto';
import { generateSecret, generateURI, verify } from 'otplib';
import type { AuditLog } from '@shortlink/audit-domain';
import { Clock, DomainError, ErrorCode, systemClock } from '@shortlink/core';
import { hashToken, Member } from './member';
import { PeopleStore, SecondFactorState } from './ports';
import { SignInThrottle } from './sign-in-throttle';

/**
 * TOTP secrets at rest (docs/design.md, "People and sessions"): they must be read back to check a
 * code, so they are sealed with AES-256-GCM under a key derived by HKDF from the code secret, bound
 * to the member's id (a secret copied to another row does not open).
 */
export class SecretBox {
  private readonly key: Buffer;

  /** `purpose` names what the box seals: each purpose has its own key (HKDF info). */
  constructor(secret: string | Buffer, purpose = 'totp-secret v1') {
    this.key = Buffer.from(hkdfSync('sha256', secret, 'shortlink', purpose, 32));
  }

  seal(memberId: string, plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(memberId, 'utf8'));
    const sealed = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return `v1.${Buffer.concat([iv, sealed, cipher.getAuthTag()]).toString('base64url')}`;
  }

  open(memberId: string, sealed: string): string {
    const bytes = Buffer.from(sealed.slice(3), 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', this.key, bytes.subarray(0, 12));
    decipher.setAAD(Buffer.from(memberId, 'utf8'));
    decipher.setAuthTag(bytes.subarray(bytes.length - 16));
    return Buffer.concat([decipher.update(bytes.subarray(12, bytes.length - 16)), decipher.final()]).toString('utf8');
  }
}

/** Recovery codes per enrolment, each used once. */
export const RECOVERY_CODES = 10;
const RECOVERY_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';
/** 10 characters of 31: about 50 bits, stored as SHA-256 (guessing is throttled as sign-ins are). */
const recoveryCode = () =>
  Array.from({ length: 10 }, () => RECOVERY_ALPHABET[randomInt(RECOVERY_ALPHABET.length)])
    .join('')
    .replace(/^(.{5})/, '$1-');
/** What a typed recovery code is compared as: lower case, no spaces or dashes. */
const normalRecovery = (code: string) => code.toLowerCase().replace(/[\s-]/g, '');

/** What a sign-in brings for the second factor. */
export interface SecondFactorProof {
  readonly code?: unknown;
  readonly recoveryCode?: unknown;
}

export type SecondFactorCheck = 'not_enrolled' | 'passed' | 'missing' | 'wrong';

/** A move to another authenticator app, started with the current factor, is confirmed within this long. */
export const MOVE_WINDOW_MS = 10 * 60_000;

/**
 * A pending secret as sealed: the secret, and when the current factor was proven to start it
 * (a move while the factor is on; null for a first enrolment). A secret sealed before moves
 * existed is the bare secret.
 */
interface PendingSecret {
  readonly secret: string;
  readonly provenAt: number | null;
}

/** What the second factor works with: the people's store, the box its secrets are sealed in, the audit log, the sign-in throttle. */
export interface SecondFactorParts {
  readonly store: PeopleStore;
  readonly box: SecretBox;
  readonly audit: AuditLog | null;
  /** Counts wrong codes with the sign-in's failures. */
  readonly throttle: SignInThrottle;
}

export interface SecondFactorOptions {
  /** The issuer the authenticator app shows beside the account. */
  readonly issuer: string;
  readonly clock?: Clock;
}

/**
 * The optional second factor (docs/design.md, "People and sessions"): TOTP (RFC 6238, otplib: 6
 * digits, 30 s, one step of clock drift either way) with recovery codes. A code is accepted once:
 * the store keeps the last time step used and refuses an older or equal one, on every instance.
 * While the factor is on, a session alone cannot change it: turning it off or moving it to another
 * app takes a current code or a recovery code, and wrong ones count with the sign-in's failures
 * (SignInThrottle: 429 past its limits).
 */
export class SecondFactorService {
  private readonly issuer: string;
  private readonly clock: Clock;

  private readonly store: PeopleStore;
  private readonly box: SecretBox;
  private readonly audit: AuditLog | null;
  private readonly throttle: SignInThrottle;

  constructor(parts: SecondFactorParts, options: SecondFactorOptions) {
    ({ store: this.store, box: this.box, audit: this.audit, throttle: this.throttle } = parts);
    this.issuer = options.issuer;
    this.clock = options.clock ?? systemClock;
  }

  /**
   * Starts an enrolment: a new secret (pending until a code of it is confirmed), for the
   * authenticator app. While the factor is on, this is a move to another app: `proof` (a current
   * code or a recovery code, spent here) is required (401 SECOND_FACTOR_REQUIRED without it,
   * 400 SECOND_FACTOR_INVALID for a wrong one, counted), and the move is confirmed within MOVE_WINDOW_MS.
   */
  async begin(member: Member, proof: SecondFactorProof = {}, clientAddress: string | null = null): Promise<{ secret: string; uri: string }> {
    const moving = (await this.prove(member, proof, clientAddress, 'start')) === 'passed';
    const secret = generateSecret();
    const pending: PendingSecret = { secret, provenAt: moving ? this.clock.now() : null };
    await this.store.setPendingSecondFactor(member.id, this.box.seal(member.id, JSON.stringify(pending)));
    return { secret, uri: generateURI({ issuer: this.issuer, label: member.email, secret }) };
  }

  /** Whether the member's factor is on (sign-in asks for a code), and whether an enrolment was started and not confirmed. */
  async status(member: Member): Promise<{ enabled: boolean; pending: boolean }> {
    const state = await this.store.secondFactorOf(member.id);
    return { enabled: Boolean(state?.secret), pending: Boolean(state?.pending) };
  }

  /**
   * Confirms the pending secret with a code of it: the factor is on, and the recovery codes are
   * shown this once. While a factor is on, only a move started with it (begin with a proof) within
   * MOVE_WINDOW_MS is confirmed: 401 SECOND_FACTOR_REQUIRED otherwise.
   */
  async confirm(member: Member, code: unknown, clientAddress: string | null): Promise<{ recoveryCodes: string[] }> {
    const state = await this.store.secondFactorOf(member.id);
    if (!state?.pending) throw invalid('no enrolment was started: POST /api/v1/me/second-factor first');
    const pending = this.openPending(member.id, state.pending);
    if (state.secret && (pending.provenAt === null || this.clock.now() - pending.provenAt > MOVE_WINDOW_MS))
      throw required(
        `your second factor is on: moving it starts with a current code or a recovery code (POST /api/v1/me/second-factor) and is confirmed within ${MOVE_WINDOW_MS / 60_000} minutes`,
      );
    const step = await this.stepOf(pending.secret, code);
    if (step === null) throw invalid('this code does not match the new secret');
    const recoveryCodes = Array.from({ length: RECOVERY_CODES }, recoveryCode);
    const enabled = await this.store.enableSecondFactor(
      member.id,
      state.pending,
      step,
      recoveryCodes.map((c) => hashToken(normalRecovery(c))),
    );
    if (!enabled) throw invalid('the enrolment changed meanwhile; start again');
    await this.record(member, clientAddress, true);
    return { recoveryCodes };
  }

  /** Turns the factor off, proven by a current code or a recovery code (a wrong one counted like a failed sign-in). */
  async disable(member: Member, proof: SecondFactorProof, clientAddress: string | null): Promise<void> {
    if ((await this.prove(member, proof, clientAddress, 'turn off')) === 'not_enrolled') throw invalid('no second factor is on');
    await this.store.disableSecondFactor(member.id);
    await this.record(member, clientAddress, false);
  }

  /** Whether the member has the factor on and, if so, whether the proof passes (a code or a recovery code, each used once). */
  async check(memberId: string, proof: SecondFactorProof): Promise<SecondFactorCheck> {
    return this.checkState(memberId, await this.store.secondFactorOf(memberId), proof);
  }

  /**
   * A person signed in proves the factor that is on (to turn it off or move it): 'not_enrolled'
   * when none is on, 'passed', or a refusal: 429 past the sign-in throttle's limits (checked
   * first), a missing proof, a wrong or used code (counted as a failed sign-in).
   */
  private async prove(
    member: Member,
    proof: SecondFactorProof,
    clientAddress: string | null,
    action: 'start' | 'turn off',
  ): Promise<'not_enrolled' | 'passed'> {
    const state = await this.store.secondFactorOf(member.id);
    if (!state?.secret) return 'not_enrolled';
    const subject = { email: member.email, address: clientAddress };
    await this.throttle.admit(subject, 'too many wrong codes for this account or from this address; retry later');
    const result = await this.checkState(member.id, state, proof);
    if (result === 'wrong') {
      await this.throttle.fail(subject);
      throw invalid('this code is wrong or already used');
    }
    if (result === 'missing')
      throw action === 'start'
        ? required('your second factor is on: send a current code (`code`) or a recovery code (`recoveryCode`) to move it to another app')
        : invalid('a current code or a recovery code is needed');
    return 'passed';
  }

  private async checkState(memberId: string, state: SecondFactorState | null, proof: SecondFactorProof): Promise<SecondFactorCheck> {
    if (!state?.secret) return 'not_enrolled';
    if (typeof proof.code === 'string' && proof.code !== '') {
      const step = await this.stepOf(this.openPending(memberId, state.secret).secret, proof.code, state.lastStep);
      return step !== null && (await this.store.useSecondFactorStep(memberId, step)) ? 'passed' : 'wrong';
    }
    if (typeof proof.recoveryCode === 'string' && proof.recoveryCode !== '')
      return (await this.store.useRecoveryCode(memberId, hashToken(normalRecovery(proof.recoveryCode)))) ? 'passed' : 'wrong';
    return 'missing';
  }

  /** A sealed secret (pending, or enabled: the store keeps the confirmed pending value as it is). */
  private openPending(memberId: string, sealed: string): PendingSecret {
    const text = this.box.open(memberId, sealed);
    return text.startsWith('{') ? (JSON.parse(text) as PendingSecret) : { secret: text, provenAt: null };
  }

  private async stepOf(secret: string, code: unknown, afterStep: number | null = null): Promise<number | null> {
    if (typeof code !== 'string' || !/^\d{6}$/.test(code)) return null;
    const result = await verify({
      secret,
      token: code,
      epoch: Math.floor(this.clock.now() / 1000),
      epochTolerance: 30,
      ...(afterStep === null ? {} : { afterTimeStep: afterStep }),
    });
    return result.valid && 'timeStep' in result ? result.timeStep : null;
  }

  private record(member: Member, clientAddress: string | null, on: boolean): Promise<void> | undefined {
    return this.audit?.record(
      this.audit.entry(
        { actor: { type: 'person', id: member.id, name: member.email }, clientAddress },
        { log: member.tenantId, action: 'member.second_factor_changed', target: { type: 'member', id: member.id, domain: null }, details: { enabled: on } },
      ),
    );
  }
}

const invalid = (why: string) => new DomainError(ErrorCode.SECOND_FACTOR_INVALID, why);
const required = (why: string) => new DomainError(ErrorCode.SECOND_FACTOR_REQUIRED, why);
