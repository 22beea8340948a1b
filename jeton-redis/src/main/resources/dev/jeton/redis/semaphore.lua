-- Jeton's fleet-wide semaphore, as a Redis function library: Library.java puts the library line
-- in front and this file's sequel, repair.lua, after it, and registers `semaphore` (defined last,
-- there) under a name made from a digest of both.
-- Every state change is one call of it (FCALL), so each is atomic; the operation is its first
-- argument. All keys share one hash tag (Redis Cluster). Time is the Redis server's clock (TIME),
-- never a client's.
--
-- Keys (layout 2; see "Layouts" below)
--   1 state    hash  the counters, and one record per live or recently finished request:
--                      limit; layout (2); c, the other counters in one field, each after a |:
--                        used (permits held), queued (requests waiting), next (slot indices
--                        from here up have never been handed out), spare (how many free slot
--                        indices are in the spare list), token (the last fencing token handed
--                        out), seq (arrival counter), sweep (no lease or waiter is due before
--                        it), forget (no tombstone is to be forgotten before it), until (0, or:
--                        nothing is granted before this server time in ms, the quarantine of a
--                        semaphore recreated after its state vanished), hot (up to HOT free
--                        slot indices below both next and the limit, comma-separated; last);
--                      r:<id>  H|weight|expiry ms|granted-at ms|slot:token,...|owner  a lease
--                              Q|weight|lease ms|queued-at ms|wake-up channel|owner    a waiter
--                                (weight 0 = awaitIdle)
--                              D|outcome  a tombstone: how the request ended (released,
--                                cancelled, expired, abandoned, toobig or idle)
--   2 queue    zset  waiting request id -> arrival number: the FIFO queue
--   3 timers   zset  every request id with a record -> when it next needs attention: a lease's
--                      expiry, a waiter's abandon time (its owner's last word plus the waiter
--                      ms), or BAND + the time its tombstone may be forgotten. BAND (2^50 ms)
--                      is far above any real time and keeps scores exact integers, so leases
--                      and waiters are the scores below BAND and tombstones those from it up.
--   4 spare    list  free slot indices that did not fit in hot
--
-- Arguments: 1 operation, 2 limit to create the semaphore with if it does not exist (-1: do not
-- create), or 'limit/ms' from a caller that has seen the semaphore before (see below), 3 the
-- caller's wake-up channel, 4 tombstone ms, 5 the caller's waiter ms (how long a waiter of its
-- stays queued after its last poll), then the operation's own arguments.
--
-- Recreation. Without persistence a restart (or FLUSHALL, an eviction, a DEL) loses the state
-- while holders still run; they learn it only at their next renewal. A caller that has seen the
-- semaphore (its handle had a reply with state) and finds no state sends 'limit/ms' with its
-- lease time: the semaphore is recreated in quarantine, granting nothing until the server time
-- plus that lease time. Every lease of the lost state expired by then (each expiry was at most
-- a lease time after the state vanished, which was before now), and its holder, counting the
-- lease time from before Redis set the expiry, has found it lost. A first creation (a caller
-- that never saw it) is not quarantined, so first use is not slowed. A try in quarantine is
-- answered 'quarantined' with the quarantine's end, not 'busy': nothing could be granted, however
-- many permits are free, and a caller that reports a full semaphore would mislead.
--
-- Invariants, after every call:
--   * used = the sum of the leases' weights = the number of slots they hold, and a new grant
--     needs used + weight <= limit (so never more than the limit is held, in this server's
--     view); queued = ZCARD queue = the number of Q records; the members of timers are
--     exactly the ids with a record, scored below BAND for H and Q records and from BAND up
--     for D records; each id has one record, so at most one of lease, waiter, tombstone;
--   * slot indices: each index below next is held by one lease, or is free (in hot or spare,
--     if below the limit), or is retired (at or above the limit since it shrank); no index from
--     next up is held. So limit - used indices below the limit are free to hand out: the free
--     ones, and next, next + 1, ... up to the limit;
--   * fencing tokens only grow, across all slots, and each is at least the server's time in
--     microseconds when it was handed out, so they keep growing even after a restart that lost
--     the data: each slot's token is above every earlier token of that slot;
--   * the head of the queue is never grantable when a call returns (grantHead runs last);
--   * nothing is granted while now < until;
--   * a request id acts once: a released, cancelled or expired id keeps its tombstone until it
--     is forgotten (at least the tombstone ms after it finished), and an id with a tombstone is
--     never queued or granted again.
--
-- Cost matters: Redis runs one call at a time, and every caller waits for it; on a small
-- machine each command a call runs costs microseconds. So no call reads or writes anything
-- whose size grows with the number of holders or waiters, and the state is read once (HMGET of
-- the counters and of the records of the ids the call names) and written once at the end (HSET
-- of what changed, one ZADD of the new timer scores). An uncontended acquire runs 4 commands
-- (TIME, HMGET, ZADD, HSET), its release the same 4. Expiry is checked where a record is read
-- anyway (an acquire's retry, a release, a renewal), and swept only when `sweep` says one may
-- be due, at most SWEEP_BATCH at a time from the timers' front; tombstones are forgotten the
-- same way, in batches (they may outlive their time by a quarter of it). So a sweep costs
-- O(log n) for the n requests, plus the ones it ends.
--
-- Layouts. Layout 1 (before) kept the holders in one string and had a `due` counter; its
-- function fails on this layout at its first use of `due`, before writing anything. This one
-- takes over a layout 1 state that nobody holds or waits on (keeping its limit, tokens and
-- quarantine) and refuses any other.
--
-- Damage. State this code cannot read is never left to leak permits silently: a key of the
-- wrong type, a field or a record that does not read, a record without its timer or queue entry
-- (or the other way round), a field that is not the semaphore's, a record or id larger than any
-- client writes (never sent to a client), a lease expiry or timer further ahead than any lease
-- or waiter can be. It is met where it is read: a command failing with WRONGTYPE, a record or
-- counter that does not parse or is too large, and an audit of the keys' sizes against the
-- counters (O(1) each) and of the last timer (O(log n)) with every sweep of due leases, so within
-- a lease time while anyone holds or waits; status, which reads every live record, also checks
-- that they add up. The call then repairs the state and runs again (`semaphore`, last), and
-- Redis's log says what was found and done:
--   * a key of the wrong type is deleted (the state key: the semaphore is then recreated as after
--     a loss, in quarantine for callers that had seen it);
--   * a record that does not read, is too large or expires too far ahead ends as 'damaged' (its
--     lease's permits come back, and its holder learns the lease is lost at its next renewal;
--     its waiter queues again);
--   * a field that is not the semaphore's is deleted;
--   * everything the records determine is rebuilt from them: the counters (used, queued, next,
--     spare and hot), the queue (its surviving order first, then by when each waiter queued),
--     the timers (leases at their expiry; a waiter or tombstone as it was, or a waiter expiry
--     or replay window from now) and the free slots. The last token and the quarantine are kept
--     if they read; else tokens go on from a second past the server's clock.
-- A limit that does not read (or is missing) is refused with an error that says how to set it,
-- since nothing else records it; setting the limit repairs it. Plausible but wrong numbers (a
-- weight changed by hand) are not found, except by status. The repair is in repair.lua.
--
-- Every reply begins with {limit, used, queued, server time in ms}. An acquire's item for a
-- request refused or queued while the semaphore is in quarantine names when it ends:
-- {id, 'quarantined', until} (a try) or {id, 'queued', until}. Requests settled by a call
-- their owner did not make are published on the wake-up channel each one was queued with: the
-- server time, then for each one 'id|granted|expiry|slot:token,...' or 'id|outcome',
-- space-separated.

local BAND = 2 ^ 50
local BAND_TEXT = '1125899906842624'
local FAR = 2 ^ 49     -- "never": no real time in ms comes near it
local HOT = 32         -- free slot indices kept in the state hash; beyond that, in spare
local SPILL = 16       -- moved between hot and spare at once
local SWEEP_BATCH = 64 -- leases or waiters ended, or tombstones forgotten, per call at most

-- The state of the call in progress. Redis runs one call at a time, and `semaphore` sets all of
-- these first; they live out here so that the helpers below are made once, when Redis loads the
-- library, not again on every call.
local STATE, QUEUE, TIMERS, SPARE
local channel, tombstoneMs, slackMs, waiterMs
local now, nowText, lim, used, queued, nextSlot, hot, spare, token, seq, sweepAt, forgetAt
local quarantine, hotSlots, freed, limitBefore, countersBefore
-- Made anew by each call: a table emptied for reuse keeps its size, and after one large call (a
-- status of thousands of holders) walking it to empty it again cost more than the whole call.
local known     -- state field -> its value in Redis (false: absent), as read by this call
local pending   -- state field -> its new value (false: delete it), written at the end
local scores    -- request id -> its new score in timers, written at the end
local announced -- wake-up channel -> list of entries

local COUNTERS = '^(%d+)|(%d+)|(%d+)|(%d+)|(%d+)|(%d+)|(%d+)|(%d+)|(%d+)|([%d,]*)$'
local MAX_LIMIT = 2 ^ 30 - 1

-- Bounds on what this code writes, so that what anyone else wrote past them is damage, found
-- before it is sent to a client: a record's text besides its tokens (its owner and wake-up
-- channel, a few hundred bytes as clients write them), a lease's tokens (SLOT_TEXT bytes a
-- permit at most), a request id (under 40 bytes as clients make them), the counters (nine
-- numbers and HOT slot indices). A 40 MB record sent whole made `jeton status` run out of memory.
local MAX_TEXT = 65536
local SLOT_TEXT = 32
local MAX_ID = 128
local MAX_COUNTERS = 1024
-- No client asks for a lease or a waiter expiry longer than a day (RedisSemaphoreOptions), so a
-- lease's expiry or a timer further ahead than that is damage: its permits would never come
-- back. An hour more, for a server clock stepped back since it was set.
local MAX_AHEAD_MS = 86400000 + 3600000

-- State this code cannot read is raised as an error that begins with DAMAGE (see Damage above);
-- `semaphore`, last, repairs the state and runs the call again.
local DAMAGE = 'jeton-damage: '

local function damaged(what)
  error(DAMAGE .. what, 0)
end

local function int(x)
  return string.format('%d', x)
end

-- Whether `record` is longer than any this code writes (see MAX_TEXT): a lease may take
-- SLOT_TEXT bytes for each permit it says it holds.
local function oversized(record)
  if #record <= MAX_TEXT then
    return false
  end
  local weight = tonumber(string.match(record, '^H|(%d+)|'))
  return not weight or #record > MAX_TEXT + weight * SLOT_TEXT
end

-- `id`, read from a key (not from the caller), if it is no longer than any id a client makes.
local function checkedId(id)
  if #id > MAX_ID then
    damaged('a request id is too long')
  end
  return id
end

-- A limit as stored, if it reads as one: a whole number from 0 to MAX_LIMIT.
local function readLimit(text)
  local limit = text and string.match(text, '^%d+$') and tonumber(text)
  if limit and limit <= MAX_LIMIT then
    return limit
  end
  return nil
end

-- Runs `command key ...` over `list` in pieces Lua's stack can take (pairs stay together).
local function inPieces(command, key, list)
  for i = 1, #list, 4000 do
    redis.call(command, key, unpack(list, i, math.min(i + 3999, #list)))
  end
end

-- A state field as this call has left it: string, or false if absent.
local function get(field)
  local value = pending[field]
  if value == nil then
    value = known[field]
    if value == nil then
      value = redis.call('HGET', STATE, field)
      known[field] = value
    end
  end
  return value
end

-- Reads the records of `ids` that this call has not read yet, in one HMGET per 4000.
local function prefetch(ids, from, step)
  local fields = {}
  for i = from, #ids, step do
    local field = 'r:' .. ids[i]
    if pending[field] == nil and known[field] == nil then
      fields[#fields + 1] = field
    end
  end
  for i = 1, #fields, 4000 do
    local piece = redis.call('HMGET', STATE, unpack(fields, i, math.min(i + 3999, #fields)))
    for k, value in ipairs(piece) do
      known[fields[i + k - 1]] = value
    end
  end
end

local function deadline(at)
  if at < sweepAt then
    sweepAt = at
  end
end

local function tombstone(id, outcome)
  pending['r:' .. id] = 'D|' .. outcome
  scores[id] = BAND + now + tombstoneMs
  if now + tombstoneMs + slackMs < forgetAt then
    forgetAt = now + tombstoneMs + slackMs
  end
end

local function removeWaiter(id)
  redis.call('ZREM', QUEUE, id)
  queued = queued - 1
  freed = true -- the new head may fit
end

local LEASE = '^H|(%d+)|(%d+)|(%d+)|(%d+:%d+[%d:,]*)|(.*)$'
local WAITER = '^Q|(%d+)|(%d+)|(%d+)|([^|]*)|(.*)$'

-- A lease record's weight, expiry, granted-at, tokens ('slot:token,...') and owner.
local function parseLease(record)
  local w, e, a, t, o = string.match(record, LEASE)
  if not w then
    damaged('a lease record does not read')
  end
  return tonumber(w), e, a, t, o
end

-- A waiter record's weight, lease ms, queued-at, wake-up channel and owner.
local function parseWaiter(record)
  if not record then
    damaged('a queue entry has no record')
  end
  if oversized(record) then
    damaged('a record is too large')
  end
  local w, l, a, c, o = string.match(record, WAITER)
  if not w then
    damaged('a waiter record does not read')
  end
  return tonumber(w), tonumber(l), a, c, o
end

local KINDS = {['H|'] = 'H', ['Q|'] = 'Q', ['D|'] = 'D'}

-- 'H', 'Q' or 'D' for a record (see Keys above), false for none.
local function kindOf(record)
  if not record then
    return false
  end
  local kind = KINDS[string.sub(record, 1, 2)]
  if not kind then
    damaged('a record of no known kind')
  end
  if oversized(record) then
    damaged('a record is too large')
  end
  return kind
end

local function announce(wakeChannel, entry)
  local list = announced[wakeChannel]
  if not list then
    list = {}
    announced[wakeChannel] = list
  end
  list[#list + 1] = entry
end

-- The free slot indices in hot, as a list (read from the counter once per call).
local function hotList()
  if not hotSlots then
    hotSlots = {}
    for slot in string.gmatch(hot, '%d+') do
      hotSlots[#hotSlots + 1] = slot
    end
  end
  return hotSlots
end

-- Takes `count` free slot indices: from hot, then from spare, then new ones from next.
local function takeSlots(count)
  local slots = hotList()
  if #slots < count and spare > 0 then
    local more = redis.call('LPOP', SPARE, math.min(spare, math.max(SPILL, count - #slots)))
      or {}
    for _, slot in ipairs(more) do
      if not string.match(slot, '^%d+$') then
        damaged('the spare list holds something else than slot indices')
      end
      slots[#slots + 1] = slot
    end
    spare = spare - #more
  end
  local taken = {}
  while #taken < count and #slots > 0 do -- oldest first, as freed (a short list)
    taken[#taken + 1] = table.remove(slots, 1)
  end
  while #taken < count do
    taken[#taken + 1] = int(nextSlot)
    nextSlot = nextSlot + 1
  end
  return taken
end

-- Gives back free slot indices (below the limit): to hot, spilling into spare past HOT.
local function giveSlots(back)
  local slots = hotList()
  for _, slot in ipairs(back) do
    slots[#slots + 1] = slot
  end
  if #slots > HOT then
    local spill = {}
    while #slots > HOT - SPILL do
      spill[#spill + 1] = table.remove(slots)
    end
    inPieces('RPUSH', SPARE, spill)
    spare = spare + #spill
  end
end

-- Gives back the slots of the lease `id` (whose record is given) and tombstones it.
local function freeLease(id, record, outcome)
  local weight, _, _, tokens = parseLease(record)
  local back, count = {}, 0
  for slot in string.gmatch(tokens, '(%d+):') do
    count = count + 1
    if tonumber(slot) < lim then
      back[#back + 1] = slot
    end
  end
  if count ~= weight then
    damaged('a lease record holds ' .. count .. ' slots for ' .. weight .. ' permits')
  end
  giveSlots(back)
  tombstone(id, outcome)
  used = used - weight
  freed = true
end

-- A lease whose expiry has passed, not swept yet, is expired the moment it is read: the
-- outcome of an operation on it is the same as after a sweep.
local function expiredOnTouch(id, record)
  local _, expiry = parseLease(record)
  if tonumber(expiry) <= now then
    freeLease(id, record, 'expired')
    return true
  end
  return false
end

-- Grants `weight` permits to `id`, the caller having checked they fit, until `now + leaseMs`
-- or `endsBy`, whichever is sooner; returns 'expiry', 'slot:token,...'.
local function grant(id, weight, leaseMs, owner, endsBy)
  local slots = takeSlots(weight)
  token = math.max(token, now * 1000 - 1)
  for i, slot in ipairs(slots) do
    token = token + 1
    slots[i] = slot .. ':' .. int(token)
  end
  local expiry = math.min(now + leaseMs, endsBy)
  local expiryText = int(expiry)
  local tokens = table.concat(slots, ',')
  pending['r:' .. id] =
    'H|' .. weight .. '|' .. expiryText .. '|' .. nowText .. '|' .. tokens .. '|' .. owner
  scores[id] = expiry
  deadline(expiry)
  used = used + weight
  return expiryText, tokens
end

-- Grants the head of the queue while it fits; fails a head larger than the limit. Nothing of
-- weight 1 or more fits while the limit is used up, so that case returns without a read.
--
-- A grant to a waiter lasts, until its holder first renews it, no longer than the waiter's queue
-- entry would have: a waiter that died after it queued, before it learnt of its grant, never
-- renews, and its permits come back when its entry would have expired (its waiter expiry after
-- its last poll), not a lease time later. A live waiter learns of the grant at once (wake-up) or
-- at its next poll, and renews it well before then (RedisLease). A head past its own abandon
-- time, not swept yet, is dropped instead of granted.
local function grantHead()
  while queued > 0 and now >= quarantine and not (used > 0 and used >= lim) do
    local head = redis.call('ZRANGE', QUEUE, 0, 0)[1]
    if not head then
      damaged('the queue has fewer entries than its count')
    end
    checkedId(head)
    local weight, leaseMs, _, wakeChannel, owner = parseWaiter(get('r:' .. head))
    local abandonAt = scores[head] or tonumber(redis.call('ZSCORE', TIMERS, head))
    if not abandonAt then
      damaged('a waiter has no timer')
    end
    if abandonAt <= now then
      removeWaiter(head)
      tombstone(head, 'abandoned')
    elseif weight > lim then
      removeWaiter(head)
      tombstone(head, 'toobig')
      announce(wakeChannel, head .. '|toobig')
    else
      local need = weight
      if need == 0 then
        need = lim -- awaitIdle: the whole limit, given straight back
      end
      if lim - used < need then
        return
      end
      removeWaiter(head)
      if weight == 0 then
        tombstone(head, 'idle')
        announce(wakeChannel, head .. '|idle')
      else
        local expiry, tokens = grant(head, weight, leaseMs, owner, abandonAt)
        announce(wakeChannel, head .. '|granted|' .. expiry .. '|' .. tokens)
      end
    end
  end
  freed = false
end

-- The earliest score in (from, to), or FAR if there is none.
local function firstScore(from, to)
  local first = redis.call('ZRANGE', TIMERS, '(' .. from, '(' .. to, 'BYSCORE', 'LIMIT', 0, 1,
    'WITHSCORES')[2]
  return first and tonumber(first) or FAR
end

-- Whether a lease's expiry, or a timer, is further ahead than any can be (see MAX_AHEAD_MS).
local function tooFarAhead(at)
  return tonumber(at) > now + MAX_AHEAD_MS
end

-- Whether the last lease or waiter timer is further ahead than any can be (O(log n)).
local function checkLastTimer()
  local last = redis.call('ZRANGE', TIMERS, '(' .. BAND_TEXT, '-inf', 'BYSCORE', 'REV', 'LIMIT',
    0, 1, 'WITHSCORES')[2]
  if last and tooFarAhead(last) then
    damaged('a timer is further ahead than any lease or waiter can be')
  end
end

-- Whether the sizes of the keys agree with the counters, each read in O(1), and the last timer
-- is no further ahead than any can be, in O(log n): a record, a timer, a queue entry or a free
-- slot index that went missing (or came from elsewhere) shows here, and so does a timer moved
-- far ahead (its permits would never come back; one due sooner may hide it from the sweeps). Run
-- with each sweep of due leases, so within a lease time while anyone holds or waits.
local function audit()
  if redis.call('HLEN', STATE) ~= 3 + redis.call('ZCARD', TIMERS) then
    damaged('its records and its timers differ in number')
  end
  if redis.call('ZCARD', QUEUE) ~= queued or redis.call('LLEN', SPARE) ~= spare then
    damaged('its queue or its spare list differs from its counters')
  end
  checkLastTimer()
end

-- Ends the leases and waiters that are due (at most SWEEP_BATCH), then forgets the tombstones
-- that are due (as many at most).
local function sweep()
  local ran = now >= sweepAt
  if ran then
    if countersBefore then -- not a state this call made
      audit()
    end
    local due = redis.call('ZRANGE', TIMERS, '-inf', nowText, 'BYSCORE', 'LIMIT', 0, SWEEP_BATCH)
    prefetch(due, 1, 1)
    for _, id in ipairs(due) do
      local record = get('r:' .. checkedId(id))
      local kind = kindOf(record)
      if kind == 'H' then
        freeLease(id, record, 'expired')
      elseif kind == 'Q' then
        removeWaiter(id)
        tombstone(id, 'abandoned')
      else -- no record: a timer left behind (cannot happen; heal it rather than meet it again)
        redis.call('ZREM', TIMERS, id)
      end
    end
    if #due == SWEEP_BATCH then
      sweepAt = now -- more may be due: the next call goes on
    else
      sweepAt = firstScore(nowText, BAND_TEXT)
    end
    if now < quarantine then
      deadline(quarantine)
    end
  end
  if now >= forgetAt then
    local bandNow = int(BAND + now)
    local old = redis.call('ZRANGE', TIMERS, BAND_TEXT, bandNow, 'BYSCORE', 'LIMIT', 0,
      SWEEP_BATCH)
    if #old > 0 then
      for _, id in ipairs(old) do
        pending['r:' .. id] = false
      end
      redis.call('ZREM', TIMERS, unpack(old))
    end
    if #old == SWEEP_BATCH then
      forgetAt = now
    else
      local first = firstScore(bandNow, '+inf')
      forgetAt = first == FAR and FAR or first - BAND + slackMs
    end
  end
  if ran or freed then -- a quarantine may have ended, too
    grantHead()
  end
end

-- How a request ended, from its tombstone record.
local function outcomeOf(record)
  return string.sub(record, 3)
end

-- A waiter's item: 'queued', and while the semaphore is in quarantine, when it ends (so that a
-- caller whose timeout runs out meanwhile can say why it was not granted).
local function queuedItem(id)
  if now < quarantine then
    return {id, 'queued', int(quarantine)}
  end
  return {id, 'queued'}
end

-- One request: granted, queued, busy or quarantined (try only: no permit free, or the semaphore
-- in quarantine, granting nothing before the time it names), or its outcome if it is over.
local function request(id, weight, leaseMs, owner, trying)
  local record = get('r:' .. id)
  local kind = kindOf(record)
  if kind == 'H' then
    if expiredOnTouch(id, record) then
      return {id, 'expired'}
    end
    local _, expiry, _, tokens = parseLease(record)
    return {id, 'granted', expiry, tokens}
  elseif kind == 'Q' then -- still waiting: it is alive for another waiter expiry
    scores[id] = now + waiterMs
    return queuedItem(id)
  elseif kind == 'D' then
    return {id, outcomeOf(record)}
  end
  if weight > lim then
    return {id, 'toobig'}
  end
  local need = weight
  if need == 0 then
    need = lim
  end
  if queued == 0 and lim - used >= need and now >= quarantine then
    if weight == 0 then
      return {id, 'idle'}
    end
    local expiry, tokens = grant(id, weight, leaseMs, owner, FAR)
    return {id, 'granted', expiry, tokens}
  end
  if trying and now < quarantine then
    return {id, 'quarantined', int(quarantine)}
  elseif trying then
    return {id, 'busy'}
  end
  seq = seq + 1
  redis.call('ZADD', QUEUE, seq, id)
  pending['r:' .. id] =
    'Q|' .. weight .. '|' .. leaseMs .. '|' .. nowText .. '|' .. channel .. '|' .. owner
  scores[id] = now + waiterMs
  deadline(now + waiterMs)
  queued = queued + 1
  return queuedItem(id)
end

-- Writes the state back, publishes the wake-ups, and puts the counters in front of the items.
local function finish(items)
  local writes, deletes = {}, {}
  if hotSlots then
    hot = table.concat(hotSlots, ',')
  end
  if lim ~= limitBefore then
    writes[#writes + 1] = 'limit'
    writes[#writes + 1] = int(lim)
  end
  local counters = string.format('%d|%d|%d|%d|%d|%d|%d|%d|%d|%s', used, queued, nextSlot, spare,
    token, seq, sweepAt, forgetAt, quarantine, hot)
  if counters ~= countersBefore then
    writes[#writes + 1] = 'c'
    writes[#writes + 1] = counters
  end
  for field, value in pairs(pending) do
    if value then
      writes[#writes + 1] = field
      writes[#writes + 1] = value
    else
      deletes[#deletes + 1] = field
    end
  end
  inPieces('HSET', STATE, writes)
  inPieces('HDEL', STATE, deletes)
  local timed = {}
  for id, score in pairs(scores) do
    if pending['r:' .. id] ~= false then -- not forgotten by this call
      timed[#timed + 1] = int(score)
      timed[#timed + 1] = id
    end
  end
  inPieces('ZADD', TIMERS, timed)
  for wakeChannel, entries in pairs(announced) do
    redis.call('PUBLISH', wakeChannel, nowText .. ' ' .. table.concat(entries, ' '))
  end
  local reply = {lim, used, queued, nowText}
  for _, item in ipairs(items) do
    reply[#reply + 1] = item
  end
  return reply
end

local operations = {}

-- Arguments 6: 'try' or 'queue'; then id, weight, lease ms, owner per request.
function operations.acquire(args)
  local trying = args[6] == 'try'
  local items = {}
  for i = 7, #args, 4 do
    items[#items + 1] =
      request(args[i], tonumber(args[i + 1]), tonumber(args[i + 2]), args[i + 3], trying)
  end
  if freed then
    grantHead()
  end
  return items
end

-- Arguments 6..: request ids. Cancel withdraws a waiter or gives back a lease; release gives
-- back a lease. Either way the id is over: it is tombstoned if it was not already.
local function finishRequests(args, outcome)
  local items = {}
  for i = 6, #args do
    local id = args[i]
    local record = get('r:' .. id)
    local kind = kindOf(record)
    if kind == 'H' then
      if expiredOnTouch(id, record) then
        items[#items + 1] = {id, 'expired'}
      else
        freeLease(id, record, outcome)
        items[#items + 1] = {id, outcome}
      end
    elseif kind == 'Q' then
      removeWaiter(id)
      tombstone(id, outcome)
      items[#items + 1] = {id, 'withdrawn'}
    elseif kind == 'D' then
      items[#items + 1] = {id, outcomeOf(record)}
    else
      tombstone(id, outcome)
      items[#items + 1] = {id, 'unknown'}
    end
  end
  grantHead()
  return items
end

function operations.release(args)
  return finishRequests(args, 'released')
end

function operations.cancel(args)
  return finishRequests(args, 'cancelled')
end

-- Arguments 6: lease ms; 7..: lease ids.
function operations.renew(args)
  local leaseMs = tonumber(args[6])
  local expiry = int(now + leaseMs)
  local items = {}
  for i = 7, #args do
    local id = args[i]
    local record = get('r:' .. id)
    local kind = kindOf(record)
    if kind == 'H' and not expiredOnTouch(id, record) then
      local weight, _, grantedAt, tokens, owner = parseLease(record)
      pending['r:' .. id] =
        'H|' .. weight .. '|' .. expiry .. '|' .. grantedAt .. '|' .. tokens .. '|' .. owner
      scores[id] = now + leaseMs
      items[#items + 1] = {id, 'renewed', expiry}
    elseif kind == 'H' then
      items[#items + 1] = {id, 'expired'}
    elseif kind == 'D' then
      items[#items + 1] = {id, outcomeOf(record)}
    else
      items[#items + 1] = {id, 'unknown'}
    end
  end
  if freed then
    grantHead()
  end
  return items
end

-- The ids of the leases and waiters (not tombstones), soonest expiry first, and their records.
local function liveRecords()
  local ids = redis.call('ZRANGE', TIMERS, '-inf', '(' .. BAND_TEXT, 'BYSCORE')
  for _, id in ipairs(ids) do
    checkedId(id)
  end
  prefetch(ids, 1, 1)
  return ids
end


-- Argument 6: the new limit. Shrinking fails queued requests above it and retires the slot
-- indices at or above it; held permits stay held until released. Growing brings back the
-- retired indices below the new limit that no lease holds.
function operations.limit(args)
  local new = tonumber(args[6])
  if new < lim then
    local kept = {}
    for _, slot in ipairs(hotList()) do
      if tonumber(slot) < new then
        kept[#kept + 1] = slot
      end
    end
    hotSlots = kept
    if spare > 0 then
      local keptSpare = {}
      for _, slot in ipairs(redis.call('LRANGE', SPARE, 0, -1)) do
        if tonumber(slot) < new then
          keptSpare[#keptSpare + 1] = slot
        end
      end
      redis.call('DEL', SPARE)
      inPieces('RPUSH', SPARE, keptSpare)
      spare = #keptSpare
    end
    for _, id in ipairs(redis.call('ZRANGE', QUEUE, 0, -1)) do
      local weight, _, _, wakeChannel = parseWaiter(get('r:' .. checkedId(id)))
      if weight > new then
        removeWaiter(id)
        tombstone(id, 'toobig')
        announce(wakeChannel, id .. '|toobig')
      end
    end
  elseif new > lim and nextSlot > lim then
    local held = {}
    for _, id in ipairs(liveRecords()) do
      local record = get('r:' .. id)
      if kindOf(record) == 'H' then
        local _, _, _, tokens = parseLease(record)
        for slot in string.gmatch(tokens, '(%d+):') do
          held[tonumber(slot)] = true
        end
      end
    end
    local back = {}
    for slot = lim, math.min(nextSlot, new) - 1 do
      if not held[slot] then
        back[#back + 1] = int(slot)
      end
    end
    giveSlots(back)
  end
  lim = new
  grantHead()
  return {}
end

-- Holders (soonest expiry first) and waiters (in queue order), each as {id, weight, granted or
-- queued at ms, owner, expiry ms (holders) or '' (waiters), tokens 'slot:token,...' or ''}.
-- Status reads every live record anyway, so it also checks that they add up to the counters.
function operations.status(args)
  local leases, held, waiting = {}, 0, 0
  for _, id in ipairs(liveRecords()) do
    local record = get('r:' .. id)
    local kind = kindOf(record)
    if kind == 'H' then
      local weight, expiry, grantedAt, tokens, owner = parseLease(record)
      if tooFarAhead(expiry) then
        damaged('a lease expires further ahead than any lease can')
      end
      leases[#leases + 1] = {id, weight, grantedAt, owner, expiry, tokens}
      held = held + weight
    elseif kind == 'Q' then
      waiting = waiting + 1
    end
  end
  local waiters = {}
  local ids = redis.call('ZRANGE', QUEUE, 0, -1)
  prefetch(ids, 1, 1)
  for i, id in ipairs(ids) do
    local weight, _, queuedAt, _, owner = parseWaiter(get('r:' .. checkedId(id)))
    waiters[i] = {id, weight, queuedAt, owner, '', ''}
  end
  if held ~= used or waiting ~= queued or #ids ~= queued then
    damaged('its records do not add up to its counters')
  end
  checkLastTimer()
  return {leases, waiters}
end

function operations.counts(args)
  return {}
end

-- Where each operation's request ids are, and the step between them: their records are read
-- with the counters.
local FIRST_ID = {acquire = 7, release = 6, cancel = 6, renew = 7}
local ID_STEP = {acquire = 4}
local MAX_FIRST_READ = 1000 -- ids whose records come with the counters; prefetch reads the rest

-- Starts the state anew with `limit`, tokens above `lastToken`, and no quarantine unless asked.
local function create(limit, lastToken, quarantineUntil)
  -- The queue and the timers went with the records they point to if only the state key was
  -- lost (a DEL, an eviction): a head without its record would fail every call. Live waiters
  -- queue again at their next poll, as after a restart.
  redis.call('DEL', QUEUE, TIMERS, SPARE)
  lim, used, queued, nextSlot, hot, spare, token, seq = limit, 0, 0, 0, '', 0, lastToken, 0
  sweepAt, forgetAt, quarantine = FAR, FAR, quarantineUntil
  limitBefore, countersBefore = nil, nil
  pending['layout'] = '2'
  if quarantineUntil > 0 then
    deadline(quarantineUntil)
  end
end

-- Takes over a layout 1 state (see Layouts above); returns an error reply if it is in use.
local function takeOver(limit)
  local old = redis.call('HMGET', STATE, 'used', 'queued', 'token', 'until')
  if tonumber(old[1]) ~= 0 or tonumber(old[2]) ~= 0 then
    return redis.error_reply('jeton: semaphore ' .. STATE .. ' is in use by an older Jeton'
      .. ' (state layout 1): stop its users, or use another key prefix')
  end
  -- layout 1's tombstone index: the same name as the state key, ending in done
  local done = string.gsub(STATE, 'state$', 'done')
  redis.call('DEL', STATE, done)
  create(tonumber(limit), tonumber(old[3]) or 0, tonumber(old[4]) or 0)
  return nil
end

-- One call: reads the clock, the counters and the records of the ids it names, sweeps what fell
-- due, runs the operation, writes the state back.
local function call(keys, args)
  STATE, QUEUE, TIMERS, SPARE = keys[1], keys[2], keys[3], keys[4]
  channel = args[3]
  tombstoneMs = tonumber(args[4])
  waiterMs = tonumber(args[5])
  slackMs = math.floor(tombstoneMs / 4)
  known, pending, scores, announced = {}, {}, {}, {}
  hotSlots, freed = nil, false
  local operation = operations[args[1]]
  if not operation then
    return redis.error_reply('jeton: unknown operation ' .. tostring(args[1]))
  end
  local clock = redis.call('TIME')
  now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
  nowText = int(now)
  local fields = {'limit', 'layout', 'c'}
  local first = FIRST_ID[args[1]] or #args + 1
  local step = ID_STEP[args[1]] or 1
  local last = math.min(#args, first + (MAX_FIRST_READ - 1) * step)
  for i = first, last, step do
    fields[#fields + 1] = 'r:' .. args[i]
  end
  local values = redis.call('HMGET', STATE, unpack(fields))
  for i = 4, #fields do
    known[fields[i]] = values[i]
  end
  local limitText, layout, counters = values[1], values[2], values[3]
  local newerLayout = layout and #layout <= 9 and tonumber(layout) -- a short number, if any
  if not layout and not counters and limitText then
    local refused = takeOver(limitText)
    if refused then
      return refused
    end
  elseif not layout and not counters then
    if redis.call('EXISTS', STATE) == 1 then
      damaged('its limit, layout and counters are missing')
    end
    local create_, quarantineMs = string.match(args[2], '^(-?%d+)/?(%d*)$')
    if tonumber(create_) < 0 then
      return {-1, 0, 0, nowText}
    end
    create(tonumber(create_), 0, quarantineMs ~= '' and now + tonumber(quarantineMs) or 0)
  elseif layout ~= '2' and newerLayout and newerLayout > 2 then
    return redis.error_reply('jeton: semaphore ' .. STATE .. ' has state layout '
      .. layout .. ', made by a newer Jeton: this one knows layout 2 only')
  elseif layout ~= '2' then
    damaged('its layout field is ' .. (layout and 'not a layout' or 'missing'))
  else
    lim = readLimit(limitText)
    if not lim then
      damaged('its limit does not read')
    end
    local u, q, n, sp, t, sq, sw, f, un
    if counters and #counters <= MAX_COUNTERS then
      u, q, n, sp, t, sq, sw, f, un, hot = string.match(counters, COUNTERS)
    end
    if not u then
      damaged('its counters do not read')
    end
    used, queued, nextSlot = tonumber(u), tonumber(q), tonumber(n)
    spare, token, seq = tonumber(sp), tonumber(t), tonumber(sq)
    sweepAt, forgetAt, quarantine = tonumber(sw), tonumber(f), tonumber(un)
    limitBefore, countersBefore = lim, counters
  end
  prefetch(args, last + step, step)
  sweep()
  return finish(operation(args))
end
