import { CacheKeys, ClickLeaseAnswer, ClickLeaseCall, ClickLeaseStore } from '@shortlink/read-path';
import { RedisClusterStore } from './redis-cluster-store';

/**
 * Reads a link's counter (a hash: `used`, and `l:<holder>` = "reserve:cap:expiresAt:given" per lease)
 * into locals, ending the leases whose time is over: their cap counts as used, the rest comes back.
 * Sets `used`, `own` ({reserve, given} or nil), `heldByOthers`, `holders` (the others + 1), `expired`
 * (fields to delete) and `now` (Redis' clock, so every instance's leases end on one clock).
 */
const READ = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local fields = redis.call('HGETALL', KEYS[1])
local used, own, heldByOthers, holders, expired = 0, nil, 0, 1, {}
local mine = 'l:' .. ARGV[1]
for i = 1, #fields, 2 do
  local f, v = fields[i], fields[i + 1]
  if f == 'used' then
    used = used + tonumber(v)
  else
    local r, c, x, g = string.match(v, '^(%d+):(%d+):(%d+):(%d+)$')
    r, c, x, g = tonumber(r), tonumber(c), tonumber(x), tonumber(g)
    if x <= now then
      used = used + math.min(r, c)
      expired[#expired + 1] = f
    elseif f == mine then
      own = {r, g}
    else
      heldByOthers = heldByOthers + r
      holders = holders + 1
    end
  end
end
`;

/**
 * \`settleClickQuota\` (read path) in Lua. ARGV: holder, limit, use, given, reserve, cap, holding (1|0),
 * floor, seed ('' for none), leaseMs. Returns {granted, reserve, used, taken, heldByOthers, lost}, or
 * -1 for a missing counter without a seed.
 */
const SETTLE = `${READ}
if #fields == 0 then
  if ARGV[9] == '' then return -1 end
  used = tonumber(ARGV[9])
end
local limit, use, given, want, cap = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local reserve = 0
if own then
  local d = given - own[2]
  if d < 0 then d = 0 end
  if d > own[1] then d = own[1] end
  used = used + d
  reserve = own[1] - d
end
local taken = used + reserve + heldByOthers
local floor = tonumber(ARGV[8])
if floor > taken then
  used = used + floor - taken
  taken = floor
end
local half = math.floor(limit / 2)
if reserve > 0 and taken > half then
  local cut = math.min(reserve, taken - half)
  reserve = reserve - cut
  taken = taken - cut
end
local granted = limit - taken
if granted > use then granted = use end
if granted < 0 then granted = 0 end
used = used + granted
taken = taken + granted
if want < reserve then
  taken = taken - (reserve - want)
  reserve = want
elseif want > reserve then
  local room = half - taken
  if room > 0 then
    local add = math.min(want - reserve, math.ceil(room / (2 * holders)))
    reserve = reserve + add
    taken = taken + add
  end
end
for _, f in ipairs(expired) do redis.call('HDEL', KEYS[1], f) end
redis.call('HSET', KEYS[1], 'used', used)
if reserve > 0 then
  redis.call('HSET', KEYS[1], mine, reserve .. ':' .. cap .. ':' .. (now + tonumber(ARGV[10])) .. ':' .. given)
elseif own then
  redis.call('HDEL', KEYS[1], mine)
end
local lost = 0
if (not own) and ARGV[7] == '1' then lost = 1 end
return {granted, reserve, used, taken, heldByOthers, lost}`;

/** {used, taken} with the ended leases counted, changing nothing; -1 for a missing counter. ARGV: a holder id ('' for none). */
const PEEK = `${READ}
if #fields == 0 then return -1 end
local taken = used + heldByOthers
if own then taken = taken + own[1] end
return {used, taken}`;

type Commands = {
  shortlinkSettleClicks(key: string, ...args: Array<string | number>): Promise<number | number[]>;
  shortlinkPeekClicks(key: string, holder: string): Promise<number | number[]>;
};

/** The counters of maxClicks on the cache's Redis Cluster connection: one hash per link, one script per call. */
export class RedisClickLeases implements ClickLeaseStore {
  private readonly commands: Commands;

  constructor(store: RedisClusterStore) {
    // On the path of a redirect of a link with maxClicks past its lease: sent as EVALSHA (ioredis loads the script on NOSCRIPT).
    store.client.defineCommand('shortlinkSettleClicks', { numberOfKeys: 1, lua: SETTLE });
    store.client.defineCommand('shortlinkPeekClicks', { numberOfKeys: 1, lua: PEEK });
    this.commands = store.client as unknown as Commands;
  }

  async settle(linkId: string, call: ClickLeaseCall): Promise<ClickLeaseAnswer | null> {
    const r = await this.commands.shortlinkSettleClicks(
      CacheKeys.clickQuota(linkId),
      call.holder,
      call.limit,
      call.use,
      call.given,
      call.reserve,
      call.cap,
      call.holding ? 1 : 0,
      call.floor,
      call.seed ?? '',
      call.leaseMs,
    );
    if (!Array.isArray(r)) return null;
    const [granted, reserve, used, taken, heldByOthers, lost] = r.map(Number);
    return { granted, reserve, used, taken, heldByOthers, lost: lost === 1 };
  }

  async peek(linkId: string): Promise<{ used: number; taken: number } | null> {
    const r = await this.commands.shortlinkPeekClicks(CacheKeys.clickQuota(linkId), '');
    return Array.isArray(r) ? { used: Number(r[0]), taken: Number(r[1]) } : null;
  }
}
