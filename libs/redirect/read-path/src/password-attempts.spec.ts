import { InMemoryCache } from './testing/in-memory-cache-store';
import { AttemptReservation, PasswordAttempts } from './password-attempts';

const allowedOf = (r: AttemptReservation[]) => r.filter((x) => x.allowed).length;

describe('PasswordAttempts', () => {
  let cache: InMemoryCache;
  beforeEach(() => (cache = new InMemoryCache()));

  it('reserves before evaluating: of 300 concurrent attempts only the limit get through, however the instances split them', async () => {
    // Two instances (each its own local count) over one shared cache, as behind a balancer.
    const instances = [new PasswordAttempts(cache, { attempts: 5, windowMs: 60_000 }), new PasswordAttempts(cache, { attempts: 5, windowMs: 60_000 })];
    const results = await Promise.all(Array.from({ length: 300 }, (_, i) => instances[i % 2].reserve('link1', '198.51.100.7')));
    expect(allowedOf(results)).toBe(5);
    const refused = results.find((r) => !r.allowed);
    expect(refused).toMatchObject({ allowed: false, retryAfterSeconds: expect.any(Number) });
    // Another visitor, or the same visitor on another link, has its own budget.
    expect((await instances[0].reserve('link1', '198.51.100.8')).allowed).toBe(true);
    expect((await instances[0].reserve('link2', '198.51.100.7')).allowed).toBe(true);
  });

  it('keeps the reservation of a wrong password and takes back that of a right one', async () => {
    const attempts = new PasswordAttempts(cache, { attempts: 2, windowMs: 60_000 });
    for (let i = 0; i < 10; i++) {
      const right = await attempts.reserve('link1', 'a');
      expect(right.allowed).toBe(true);
      if (right.allowed) await right.giveBack();
    }
    expect((await attempts.reserve('link1', 'a')).allowed).toBe(true); // wrong: kept
    expect((await attempts.reserve('link1', 'a')).allowed).toBe(true); // wrong: kept
    expect((await attempts.reserve('link1', 'a')).allowed).toBe(false);
  });

  it('still limits in the process while the shared cache is down', async () => {
    const attempts = new PasswordAttempts(cache, { attempts: 3, windowMs: 60_000 });
    cache.down = true;
    const results = await Promise.all(Array.from({ length: 20 }, () => attempts.reserve('link1', 'a', 0)));
    expect(allowedOf(results)).toBe(3);
  });

  it('does not let refused attempts use up the local count: the shared count decides across instances', async () => {
    const a = new PasswordAttempts(cache, { attempts: 2, windowMs: 60_000 });
    const b = new PasswordAttempts(cache, { attempts: 2, windowMs: 60_000 });
    expect([(await a.reserve('l', 'v', 0)).allowed, (await a.reserve('l', 'v', 0)).allowed]).toEqual([true, true]);
    expect((await b.reserve('l', 'v', 0)).allowed).toBe(false); // the shared count is at the limit
    cache.values.clear(); // the shared window ended (or the key was evicted)
    expect([(await b.reserve('l', 'v', 0)).allowed, (await b.reserve('l', 'v', 0)).allowed]).toEqual([true, true]);
  });
});
