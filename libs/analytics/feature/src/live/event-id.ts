import { DomainError, ErrorCode } from '@shortlink/core';

/** A position in one tenant's clicks on one instance: `<instanceId>.<seq>`, seq counting the tenant's clicks from 1. */
export interface LiveEventId {
  readonly instanceId: string;
  readonly seq: number;
}

const EVENT_ID = /^([a-z0-9]{1,32})\.(\d{1,15})$/;

export const formatEventId = (id: LiveEventId): string => `${id.instanceId}.${id.seq}`;

/**
 * The Last-Event-ID a client resumes from: undefined or empty for none; anything that is not
 * `<instanceId>.<seq>` is 400 INVALID_EVENT_ID (a client must never be resumed from a guess).
 */
export function parseEventId(value: string | string[] | undefined): LiveEventId | null {
  if (value === undefined || value === '') return null;
  const text = Array.isArray(value) ? value.join(',') : value;
  const m = EVENT_ID.exec(text.trim());
  const seq = m ? Number(m[2]) : NaN;
  if (!m || !Number.isSafeInteger(seq) || seq < 1) {
    throw new DomainError(ErrorCode.INVALID_EVENT_ID, 'Last-Event-ID must be the id of an event this stream sent (<instance>.<number>)', {
      header: 'last-event-id',
    });
  }
  return { instanceId: m[1], seq };
}
