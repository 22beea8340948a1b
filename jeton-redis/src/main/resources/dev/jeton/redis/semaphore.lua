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
-- Every reply is one string: limit, used, queued, server time in ms, then an item per request
-- the call names, 'id|status|...', space-separated (status's reply is a list instead: those four,
-- then its lists of holders and waiters). An acquire's item for a request refused or queued
-- while the semaphore is in quarantine names when it ends: 'id|quarantined|until' (a try) or
-- 'id|queued|until'. Requests settled by a call their owner did not make are published on the
-- wake-up channel each one was queued with, in the same form: the server time, then for each
-- one 'id|granted|expiry|slot:token,...' or 'id|outcome', space-separated.

-- Redis runs a library's functions with globals that are an empty table whose metatable finds
-- Redis's own (__index), so every global a call names (string, redis, tonumber...) costs a failed
-- lookup and a metamethod before the real one, some fifty a call. These locals stand for them.
-- The first call binds them (see `semaphore`): while the library loads only `redis` exists, a
-- smaller one, which registers the function.
local function runtimeGlobals() -- made before the locals below, so it reads the globals
  return redis, string, table, math, tonumber, tostring, type, pairs, ipairs, unpack, error,
    pcall
end
local redis = redis
local string, table, math, tonumber, tostring, type, pairs, ipairs, unpack, error, pcall
local globalsBound = false

local function bindGlobals()
  redis, string, table, math, tonumber, tostring, type, pairs, ipairs, unpack, error, pcall =
    runtimeGlobals()
  globalsBound = true
end

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
local scores    -- request id -> its new score in timers, as text, written at the end
local announced -- wake-up channel -> list of entries (nil until there is one)
-- The counters field (c) as this library last read or wrote it, and its numbers (used ... until,
-- then hot). The next call most often reads what the last one wrote, and takes them from here
-- instead of parsing them again: a memo of a pure function of the text, so it holds whichever
-- semaphore or call the text came from. Parsing them (ten numbers) took a tenth of a call.
local memoCounters, memoNumbers

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

-- The number a text reads as, as tonumber says, for texts that come back call after call
-- (weights, lease and waiter times, slot indices, the limit). tonumber runs strtod twice in this
-- Lua, over a thousand instructions, and a call used to make dozens of them: the texts seen are
-- kept with their numbers, a few hundred at most (then forgotten all at once).
local NUMBERS, numbersKept = {}, 0

local function number(text)
  local value = NUMBERS[text]
  if value == nil then
    value = tonumber(text)
    if value ~= nil then
      if numbersKept >= 256 then
        NUMBERS, numbersKept = {}, 0
      end
      NUMBERS[text] = value
      numbersKept = numbersKept + 1
    end
  end
  return value
end

-- The text of a number, for numbers that come back call after call (weights, lease times, the
-- counters; each is a sprintf), kept the same way: a whole number as int makes it, any other as
-- `..` does (the two agree on whole numbers below 10^14).
local DECIMALS, decimalsKept = {}, 0

local function decimal(value)
  local text = DECIMALS[value]
  if text == nil then
    if value % 1 == 0 then
      text = int(value)
    else
      text = value .. ''
    end
    if value == value then -- not NaN, which no table takes as a key
      if decimalsKept >= 256 then
        DECIMALS, decimalsKept = {}, 0
      end
      DECIMALS[value] = text
      decimalsKept = decimalsKept + 1
    end
  end
  return text
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

-- A limit as stored, if it reads as one: a whole number from 0 to MAX_LIMIT. The last text that
-- read is kept with its limit: every call reads the limit, and it seldom changes.
local limitTextRead, limitRead

local function readLimit(text)
  if text and text == limitTextRead then
    return limitRead
  end
  local limit = text and string.match(text, '^%d+$') and tonumber(text)
  if limit and limit <= MAX_LIMIT then
    limitTextRead, limitRead = text, limit
    return limit
  end
  return nil
end

-- Runs `command key ...` over the first `n` entries of `list` (all if n is nil) in pieces Lua's
-- stack can take (pairs stay together).
local function inPieces(command, key, list, n)
  n = n or #list
  if n <= 4000 then -- one piece, the usual case
    if n > 0 then
      redis.call(command, key, unpack(list, 1, n))
    end
    return
  end
  for i = 1, n, 4000 do
    redis.call(command, key, unpack(list, i, math.min(i + 3999, n)))
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
  if from > #ids then
    return
  end
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
  scores[id] = int(BAND + now + tombstoneMs)
  if now + tombstoneMs + slackMs < forgetAt then
    forgetAt = now + tombstoneMs + slackMs
  end
end

local function removeWaiter(id)
  redis.call('ZREM', QUEUE, id)
  queued = queued - 1
  freed = true -- the new head may fit
end

-- A lease record and a waiter record up to their owner, which is the rest of the record. A
-- pattern that took the owner too, '(.*)$', went through it a character at a time.
local LEASE = '^H|(%d+)|(%d+)|(%d+)|(%d+:%d+[%d:,]*)|'
local WAITER = '^Q|(%d+)|(%d+)|(%d+)|([^|]*)|'

-- A lease record's weight, expiry, granted-at, tokens ('slot:token,...'), and if asked its
-- owner.
local function parseLease(record, withOwner)
  local _, last, w, e, a, t = string.find(record, LEASE)
  if not w then
    damaged('a lease record does not read')
  end
  return number(w), e, a, t, withOwner and string.sub(record, last + 1)
end

-- A waiter record's weight, lease ms, queued-at, wake-up channel, and if asked its owner.
local function parseWaiter(record, withOwner)
  if not record then
    damaged('a queue entry has no record')
  end
  if #record > MAX_TEXT and oversized(record) then
    damaged('a record is too large')
  end
  local _, last, w, l, a, c = string.find(record, WAITER)
  if not w then
    damaged('a waiter record does not read')
  end
  return number(w), number(l), a, c, withOwner and string.sub(record, last + 1)
end

-- A record's kind by its first two bytes, 'H|', 'Q|' or 'D|' (read as numbers: string.sub
-- would make a string of them).
local KINDS = {[72] = 'H', [81] = 'Q', [68] = 'D'}
local BAR = 124

-- 'H', 'Q' or 'D' for a record (see Keys above), false for none.
local function kindOf(record)
  if not record then
    return false
  end
  local first, second = string.byte(record, 1, 2)
  local kind = second == BAR and KINDS[first]
  if not kind then
    damaged('a record of no known kind')
  end
  if #record > MAX_TEXT and oversized(record) then
    damaged('a record is too large')
  end
  return kind
end

local function announce(wakeChannel, entry)
  if not announced then
    announced = {}
  end
  local list = announced[wakeChannel]
  if not list then
    list = {}
    announced[wakeChannel] = list
  end
  list[#list + 1] = entry
end

-- The free slot indices in hot, as a list (read from the counter once per call). Until a call
-- makes the list, `hot` is the truth; from then on the list is, and finish joins it.
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
  if count == 1 and not hotSlots and hot ~= '' then
    -- The usual case, one index from hot, taken from the text without making the list: the
    -- first one, the oldest, as below.
    local comma = string.find(hot, ',', 1, true)
    if not comma then
      local slot = hot
      hot = ''
      return {slot}
    elseif comma > 1 then
      local slot = string.sub(hot, 1, comma - 1)
      hot = string.sub(hot, comma + 1)
      return {slot}
    end
  end
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
  if #back == 1 and not hotSlots then
    -- The usual case, one index, added to the text without making the list while hot stays
    -- short enough that it cannot hold more than HOT indices (each takes a digit and a comma).
    local longer = hot == '' and back[1] or hot .. ',' .. back[1]
    if #longer < 2 * HOT then
      hot = longer
      return
    end
  end
  local slots = hotList()
  for i = 1, #back do
    slots[#slots + 1] = back[i]
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

-- Gives back the `weight` slots in `tokens` of the lease `id` and tombstones it.
local function freeLease(id, weight, tokens, outcome)
  local back, count = {}, 0
  -- One slot, the usual case, read at once: the pattern of the loop below, '(%d+):', retries
  -- at every digit of a token that no colon follows, hundreds of steps a lease.
  local only = weight == 1 and string.match(tokens, '^(%d+):%d+$')
  if only then
    count = 1
    if number(only) < lim then
      back[1] = only
    end
  else
    -- Each run of digits that a colon follows is a slot (as '(%d+):' finds them), read as a
    -- run and what follows it, which needs no retries.
    for slot, colon in string.gmatch(tokens, '(%d+)(:?)') do
      if colon ~= '' then
        count = count + 1
        if number(slot) < lim then
          back[#back + 1] = slot
        end
      end
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

-- A lease (read from its record) whose expiry has passed, not swept yet, is expired the moment
-- it is read: the outcome of an operation on it is the same as after a sweep.
local function expiredOnTouch(id, weight, expiry, tokens)
  if tonumber(expiry) <= now then
    freeLease(id, weight, tokens, 'expired')
    return true
  end
  return false
end

-- Grants `weight` permits to `id`, the caller having checked they fit, until `now + leaseMs`
-- or `endsBy`, whichever is sooner; returns 'expiry', 'slot:token,...'.
local function grant(id, weight, leaseMs, owner, endsBy)
  local slots = takeSlots(weight)
  if token < now * 1000 - 1 then
    token = now * 1000 - 1
  end
  for i = 1, #slots do
    token = token + 1
    slots[i] = slots[i] .. ':' .. decimal(token) -- kept: finish writes the last in the counters
  end
  local expiry = now + leaseMs
  if endsBy < expiry then
    expiry = endsBy
  end
  local expiryText = int(expiry)
  local tokens = weight == 1 and slots[1] or table.concat(slots, ',')
  pending['r:' .. id] =
    'H|' .. decimal(weight) .. '|' .. expiryText .. '|' .. nowText .. '|' .. tokens .. '|' .. owner
  scores[id] = expiryText
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
    local head = redis.call('ZRANGE', QUEUE, '0', '0')[1]
    if not head then
      damaged('the queue has fewer entries than its count')
    end
    checkedId(head)
    local weight, leaseMs, _, wakeChannel, owner = parseWaiter(get('r:' .. head), true)
    local abandonAt = tonumber(scores[head] or redis.call('ZSCORE', TIMERS, head))
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
        local weight, _, _, tokens = parseLease(record)
        freeLease(id, weight, tokens, 'expired')
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

-- How a request ended, from its tombstone record: a word, as this code writes them. Any other
-- text is damage, and would not pass through a reply, whose separators are ' ' and '|'.
local TOMBSTONE = '^D|(%l+)$'

local function outcomeOf(record)
  local outcome = string.match(record, TOMBSTONE)
  if not outcome then
    damaged('a tombstone does not read')
  end
  return outcome
end

-- A waiter's item: 'queued', and while the semaphore is in quarantine, when it ends (so that a
-- caller whose timeout runs out meanwhile can say why it was not granted).
local function queuedItem(id)
  if now < quarantine then
    return id .. '|queued|' .. int(quarantine)
  end
  return id .. '|queued'
end

-- One request: granted, queued, busy or quarantined (try only: no permit free, or the semaphore
-- in quarantine, granting nothing before the time it names), or its outcome if it is over.
local function request(id, weight, leaseMs, owner, trying)
  local field = 'r:' .. id
  local record = get(field)
  local kind = kindOf(record)
  if kind == 'H' then
    local held, expiry, _, tokens = parseLease(record)
    if expiredOnTouch(id, held, expiry, tokens) then
      return id .. '|expired'
    end
    return id .. '|granted|' .. expiry .. '|' .. tokens
  elseif kind == 'Q' then -- still waiting: it is alive for another waiter expiry
    scores[id] = int(now + waiterMs)
    return queuedItem(id)
  elseif kind == 'D' then
    return id .. '|' .. outcomeOf(record)
  end
  if weight > lim then
    return id .. '|toobig'
  end
  local need = weight
  if need == 0 then
    need = lim
  end
  if queued == 0 and lim - used >= need and now >= quarantine then
    if weight == 0 then
      return id .. '|idle'
    end
    local expiry, tokens = grant(id, weight, leaseMs, owner, FAR)
    return id .. '|granted|' .. expiry .. '|' .. tokens
  end
  if trying and now < quarantine then
    return id .. '|quarantined|' .. int(quarantine)
  elseif trying then
    return id .. '|busy'
  end
  seq = seq + 1
  redis.call('ZADD', QUEUE, decimal(seq), id) -- its text kept for finish (see decimal)
  pending[field] =
    'Q|' .. decimal(weight) .. '|' .. decimal(leaseMs) .. '|' .. nowText .. '|' .. channel .. '|'
    .. owner
  scores[id] = int(now + waiterMs)
  deadline(now + waiterMs)
  queued = queued + 1
  return queuedItem(id)
end

-- The argument lists of finish's writes, made once and reused, their lengths counted there (not
-- by #, which would count what an earlier call left past them): a table made anew each call
-- grew a slot at a time, resized as it went, and was garbage after. One that a large call
-- filled is dropped rather than kept at that size.
local writes, deletes, timed = {}, {}, {}
local REUSED = 64

-- Writes the state back, publishes the wake-ups, and puts the counters in front of the items:
-- the reply. Items are strings, 'id|status|...', and the reply one string, 'limit used queued
-- server-ms item...' as wake-ups are, but for status, whose items are lists (of holders and
-- waiters) and whose reply is a list. A list of lists cost Redis more to send than all the
-- rest of the reply (and goes out through its slower, deferred-length path).
local function finish(items)
  local nWrites, nDeletes, nTimed = 0, 0, 0
  if hotSlots then
    hot = table.concat(hotSlots, ',')
  end
  if lim ~= limitBefore then
    writes[1], writes[2] = 'limit', int(lim)
    nWrites = 2
  end
  -- The counters, as string.format('%d|%d|%d|%d|%d|%d|%d|%d|%d|%s') makes them. Whole
  -- numbers, as they always are but for damage, are joined from their texts as kept (see
  -- decimal: each changes seldom, or its text was made already, as a new token's by grant), not
  -- formatted anew, nine sprintf calls, the largest part of finish.
  local whole = used % 1 == 0 and queued % 1 == 0 and nextSlot % 1 == 0 and spare % 1 == 0
    and token % 1 == 0 and seq % 1 == 0 and sweepAt % 1 == 0 and forgetAt % 1 == 0
    and quarantine % 1 == 0
  local counters
  if whole then
    local D = DECIMALS
    counters = (D[used] or decimal(used)) .. '|' .. (D[queued] or decimal(queued)) .. '|'
      .. (D[nextSlot] or decimal(nextSlot)) .. '|' .. (D[spare] or decimal(spare)) .. '|'
      .. (D[token] or decimal(token)) .. '|' .. (D[seq] or decimal(seq)) .. '|'
      .. (D[sweepAt] or decimal(sweepAt)) .. '|' .. (D[forgetAt] or decimal(forgetAt)) .. '|'
      .. (D[quarantine] or decimal(quarantine)) .. '|' .. hot
  else
    counters = string.format('%d|%d|%d|%d|%d|%d|%d|%d|%d|%s', used, queued, nextSlot, spare,
      token, seq, sweepAt, forgetAt, quarantine, hot)
  end
  if counters ~= countersBefore then
    writes[nWrites + 1], writes[nWrites + 2] = 'c', counters
    nWrites = nWrites + 2
    -- The next call most likely reads this, and need not parse it (see call): if every counter
    -- is a whole number, these are the numbers it reads as.
    if whole then
      memoCounters = counters
      memoNumbers = {used, queued, nextSlot, spare, token, seq, sweepAt, forgetAt, quarantine, hot}
    end
  end
  for field, value in pairs(pending) do
    if value then
      writes[nWrites + 1], writes[nWrites + 2] = field, value
      nWrites = nWrites + 2
    else
      nDeletes = nDeletes + 1
      deletes[nDeletes] = field
    end
  end
  inPieces('HSET', STATE, writes, nWrites)
  if nDeletes > 0 then
    inPieces('HDEL', STATE, deletes, nDeletes)
  end
  for id, score in pairs(scores) do
    if nDeletes == 0 or pending['r:' .. id] ~= false then -- not forgotten by this call
      timed[nTimed + 1], timed[nTimed + 2] = score, id
      nTimed = nTimed + 2
    end
  end
  inPieces('ZADD', TIMERS, timed, nTimed)
  if nWrites > REUSED then
    writes = {}
  end
  if nDeletes > REUSED then
    deletes = {}
  end
  if nTimed > REUSED then
    timed = {}
  end
  if announced then
    for wakeChannel, entries in pairs(announced) do
      redis.call('PUBLISH', wakeChannel, nowText .. ' ' .. table.concat(entries, ' '))
    end
  end
  -- The counts as Redis sent them when they were numbers in a list: whole (truncated).
  local counts
  if whole and lim % 1 == 0 then
    counts = (DECIMALS[lim] or decimal(lim)) .. ' ' .. (DECIMALS[used] or decimal(used)) .. ' '
      .. (DECIMALS[queued] or decimal(queued)) .. ' ' .. nowText
  else
    counts = string.format('%d %d %d %s', lim, used, queued, nowText)
  end
  if #items == 0 then
    return counts
  elseif type(items[1]) == 'string' then
    if #items == 1 then -- the usual reply
      return counts .. ' ' .. items[1]
    end
    return counts .. ' ' .. table.concat(items, ' ')
  end
  local reply = {lim, used, queued, nowText} -- status: lists of holders and waiters
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
      request(args[i], NUMBERS[args[i + 1]] or number(args[i + 1]),
        NUMBERS[args[i + 2]] or number(args[i + 2]), args[i + 3], trying)
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
      local weight, expiry, _, tokens = parseLease(record)
      if expiredOnTouch(id, weight, expiry, tokens) then
        items[#items + 1] = id .. '|expired'
      else
        freeLease(id, weight, tokens, outcome)
        items[#items + 1] = id .. '|' .. outcome
      end
    elseif kind == 'Q' then
      removeWaiter(id)
      tombstone(id, outcome)
      items[#items + 1] = id .. '|withdrawn'
    elseif kind == 'D' then
      items[#items + 1] = id .. '|' .. outcomeOf(record)
    else
      tombstone(id, outcome)
      items[#items + 1] = id .. '|unknown'
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
  local leaseMs = number(args[6])
  local expiry = int(now + leaseMs)
  local items = {}
  for i = 7, #args do
    local id = args[i]
    local record = get('r:' .. id)
    local kind = kindOf(record)
    local weight, expiredAt, grantedAt, tokens, owner
    if kind == 'H' then
      weight, expiredAt, grantedAt, tokens, owner = parseLease(record, true)
    end
    if kind == 'H' and not expiredOnTouch(id, weight, expiredAt, tokens) then
      pending['r:' .. id] = 'H|' .. decimal(weight) .. '|' .. expiry .. '|' .. grantedAt .. '|'
        .. tokens .. '|' .. owner
      scores[id] = expiry
      items[#items + 1] = id .. '|renewed|' .. expiry
    elseif kind == 'H' then
      items[#items + 1] = id .. '|expired'
    elseif kind == 'D' then
      items[#items + 1] = id .. '|' .. outcomeOf(record)
    else
      items[#items + 1] = id .. '|unknown'
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
      local weight, expiry, grantedAt, tokens, owner = parseLease(record, true)
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
    local weight, _, queuedAt, _, owner = parseWaiter(get('r:' .. checkedId(id)), true)
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

-- The zeros in front of a number of milliseconds of n digits (0 to 3) to make it three.
local PADDING = {[0] = '000', '00', '0', ''}

-- One call: reads the clock, the counters and the records of the ids it names, sweeps what fell
-- due, runs the operation, writes the state back.
local function call(keys, args)
  STATE, QUEUE, TIMERS, SPARE = keys[1], keys[2], keys[3], keys[4]
  channel = args[3]
  tombstoneMs = NUMBERS[args[4]] or number(args[4])
  waiterMs = NUMBERS[args[5]] or number(args[5])
  slackMs = (tombstoneMs - tombstoneMs % 4) / 4 -- math.floor(tombstoneMs / 4), without a call
  known, pending, scores, announced = {}, {}, {}, nil
  hotSlots, freed = nil, false
  local operation = operations[args[1]]
  if not operation then
    return redis.error_reply('jeton: unknown operation ' .. tostring(args[1]))
  end
  -- The time in ms, as text from TIME's seconds and the thousands of its microseconds (up to
  -- six digits, no zeros in front: their first three of six), then read once: what
  -- int(seconds * 1000 + floor(micros / 1000)) makes, without two numbers read and one formatted.
  local clock = redis.call('TIME')
  local millis = string.sub(clock[2], 1, -4)
  nowText = clock[1] .. PADDING[#millis] .. millis
  now = tonumber(nowText)
  local first = FIRST_ID[args[1]] or #args + 1
  local step = ID_STEP[args[1]] or 1
  local last = first + (MAX_FIRST_READ - 1) * step
  if last > #args then
    last = #args
  end
  local values
  if first <= last and first + step > last then -- one request id, the usual call: no list to make
    local field = 'r:' .. args[first]
    values = redis.call('HMGET', STATE, 'limit', 'layout', 'c', field)
    known[field] = values[4]
  else
    local fields = {'limit', 'layout', 'c'}
    for i = first, last, step do
      fields[#fields + 1] = 'r:' .. args[i]
    end
    values = redis.call('HMGET', STATE, unpack(fields))
    for i = 4, #fields do
      known[fields[i]] = values[i]
    end
  end
  local limitText, layout, counters = values[1], values[2], values[3]
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
      return '-1 0 0 ' .. nowText
    end
    create(tonumber(create_), 0, quarantineMs ~= '' and now + tonumber(quarantineMs) or 0)
  elseif layout and layout ~= '2' and #layout <= 9 and (tonumber(layout) or 0) > 2 then
    return redis.error_reply('jeton: semaphore ' .. STATE .. ' has state layout '
      .. layout .. ', made by a newer Jeton: this one knows layout 2 only')
  elseif layout ~= '2' then
    damaged('its layout field is ' .. (layout and 'not a layout' or 'missing'))
  else
    lim = readLimit(limitText)
    if not lim then
      damaged('its limit does not read')
    end
    if not counters or counters ~= memoCounters then
      local u, q, n, sp, t, sq, sw, f, un, h
      if counters and #counters <= MAX_COUNTERS then
        u, q, n, sp, t, sq, sw, f, un, h = string.match(counters, COUNTERS)
      end
      if not u then
        damaged('its counters do not read')
      end
      memoNumbers = {tonumber(u), tonumber(q), tonumber(n), tonumber(sp), tonumber(t),
        tonumber(sq), tonumber(sw), tonumber(f), tonumber(un), h}
      memoCounters = counters
    end
    local c = memoNumbers
    used, queued, nextSlot, spare, token = c[1], c[2], c[3], c[4], c[5]
    seq, sweepAt, forgetAt, quarantine, hot = c[6], c[7], c[8], c[9], c[10]
    limitBefore, countersBefore = lim, counters
  end
  prefetch(args, last + step, step)
  sweep()
  return finish(operation(args))
end
