import { CheckPolicy, OwnershipCheck, OwnershipState, pendingState, stateAfterCheck } from './domain-ownership';

const policy: CheckPolicy = { backoffMs: 1000, backoffMaxMs: 8000, recheckMs: 3_600_000, unverifyAfter: 3, retryWindowMs: 60_000 };
const at = (ms: number) => new Date(Date.UTC(2026, 0, 1) + ms);
const pass: OwnershipCheck = { passed: true, method: 'dns' };
const no: OwnershipCheck = { passed: false, conclusive: true, reason: 'no TXT record _shortlink-challenge.go.acme.test' };
const unsure: OwnershipCheck = { passed: false, conclusive: false, reason: 'DNS could not answer: ETIMEOUT' };

describe('stateAfterCheck', () => {
  it('retries a pending domain with doubling waits up to the cap, and stops at the end of its window', () => {
    let state: OwnershipState = pendingState(at(0), 500, policy);
    expect(state).toMatchObject({ status: 'pending', nextCheckAt: at(500), retryUntil: at(60_000), failures: 0 });
    const waits: number[] = [];
    let now = 500;
    for (let i = 0; state.nextCheckAt; i++) {
      state = stateAfterCheck(state, i % 2 ? unsure : no, at(now), policy);
      if (state.nextCheckAt) {
        waits.push(state.nextCheckAt.getTime() - at(now).getTime());
        now = state.nextCheckAt.getTime() - at(0).getTime();
      }
    }
    // A check that could not tell counts as a failure for a domain not yet proven.
    expect(waits).toEqual([1000, 2000, 4000, 8000, 8000, 8000, 8000, 8000, 8000]);
    expect(state).toMatchObject({ status: 'pending', failures: 10, nextCheckAt: null, retryUntil: at(60_000) });
    expect(state.lastFailure).toMatch(/TXT|DNS/);
  });

  it('verifies on a pass, whatever came before, and schedules the re-check', () => {
    const failed = stateAfterCheck(pendingState(at(0), 0, policy), no, at(0), policy);
    expect(stateAfterCheck(failed, pass, at(5000), policy)).toEqual({
      status: 'verified',
      verifiedBy: 'dns',
      verifiedAt: at(5000),
      checkedAt: at(5000),
      failures: 0,
      lastFailure: null,
      nextCheckAt: at(5000 + 3_600_000),
      retryUntil: null,
    });
  });

  it('unverifies a verified domain after unverifyAfter conclusive failures in a row; a check that could not tell does not count', () => {
    let state = stateAfterCheck(pendingState(at(0), 0, policy), pass, at(0), policy);
    state = stateAfterCheck(state, no, at(10), policy);
    expect(state).toMatchObject({ status: 'verified', failures: 1, nextCheckAt: at(1010) });
    state = stateAfterCheck(state, unsure, at(1010), policy);
    expect(state).toMatchObject({ status: 'verified', failures: 1, nextCheckAt: at(2010), lastFailure: unsure.reason });
    state = stateAfterCheck(state, no, at(2010), policy);
    expect(state).toMatchObject({ status: 'verified', failures: 2, nextCheckAt: at(4010) });
    // A pass in between starts the count again.
    const recovered = stateAfterCheck(state, pass, at(4010), policy);
    expect(recovered).toMatchObject({ status: 'verified', failures: 0 });
    state = stateAfterCheck(state, no, at(4010), policy);
    expect(state).toMatchObject({ status: 'unverified', failures: 3, nextCheckAt: at(5010), retryUntil: at(64_010), verifiedBy: 'dns' });
    // Retried like a pending domain, and verified again once the record is back.
    state = stateAfterCheck(state, no, at(5010), policy);
    expect(state).toMatchObject({ status: 'unverified', failures: 4, nextCheckAt: at(5010 + 8000) });
    expect(stateAfterCheck(state, { passed: true, method: 'http' }, at(13_010), policy)).toMatchObject({ status: 'verified', verifiedBy: 'http' });
  });

  it('starts the retry window again for a check the tenant asks for', () => {
    const over: OwnershipState = { ...pendingState(at(0), 0, policy), failures: 9, nextCheckAt: null };
    const asked = stateAfterCheck(over, no, at(100_000), policy, true);
    expect(asked).toMatchObject({ status: 'pending', failures: 10, retryUntil: at(160_000), nextCheckAt: at(108_000) });
    expect(stateAfterCheck(over, no, at(100_000), policy, false).nextCheckAt).toBeNull();
  });

  it('changes nothing of an operator’s domain but the time of the check', () => {
    const operator: OwnershipState = { ...pendingState(at(0), 0, policy), status: 'verified', verifiedBy: 'operator', nextCheckAt: null, retryUntil: null };
    expect(stateAfterCheck(operator, no, at(7), policy)).toEqual({ ...operator, checkedAt: at(7), lastFailure: no.reason, nextCheckAt: null });
  });
});
