-- Jeton's fleet-wide semaphore, as a Redis function library: Link.java puts the library line in
-- front and registers `semaphore` (defined last) under a name made from a digest of this code.
-- Every state change is one call of it (FCALL), so each is atomic; the operation is its first
-- argument. All keys share one hash tag (Redis Cluster). Time is the Redis server's clock (TIME),
-- never a client's.
--
-- Keys
--   1 state    hash  the counters, and one field per live or recently finished request:
--                      limit; used (permits held); queued (requests waiting); holders (the ids
--                      of the leases, each after a space); next (slot indices from here up have
--                      never been handed out); free (the free slot indices below both next and
--                      the limit, comma-separated); token (the last fencing token handed out);
--                      seq (arrival counter); due (no lease or waiter expires, and no tombstone
--                      is to be forgotten, before it, give or take the slack allowed to
--                      tombstones: a call before it has nothing to sweep);
--                      until (absent, or: nothing is granted before this server time in ms,
--                      the quarantine of a semaphore recreated after its state vanished);
--                      h:<id>  a lease:  weight|expiry ms|granted-at ms|slot:token,...|owner
--                      q:<id>  a waiter: weight|lease ms|queued-at ms|abandoned-at ms|
--                                        wake-up channel|owner   (weight 0 = awaitIdle)
--                      d:<id>  a tombstone: how the request ended (released, cancelled, expired,
--                              abandoned, toobig or idle)
--   2 queue    zset  waiting request id -> arrival number: the FIFO queue
--   3 done     zset  finished request id -> ms after which its tombstone may be forgotten
--
-- Arguments: 1 operation, 2 limit to create the semaphore with if it does not exist (-1: do not
-- create), or 'limit/ms' from a caller that has seen the semaphore before (see below), 3 the
-- caller's wake-up channel, 4 tombstone ms, then the operation's own arguments.
--
-- Recreation. Without persistence a restart (or FLUSHALL, an eviction, a DEL) loses the state
-- while holders still run; they learn it only at their next renewal. A caller that has seen the
-- semaphore (its handle had a reply with state) and finds no state sends 'limit/ms' with its
-- lease time: the semaphore is recreated in quarantine, granting nothing until the server time
-- plus that lease time. Every lease of the lost state expired by then (each expiry was at most
-- a lease time after the state vanished, which was before now), and its holder, counting the
-- lease time from before Redis set the expiry, has found it lost. A first creation (a caller
-- that never saw it) is not quarantined, so first use is not slowed.
--
-- Invariants, after every call:
--   * used = the sum of the leases' weights = the number of slots they hold, and a new grant
--     needs used + weight <= limit (so never more than the limit is held, in this server's
--     view); holders lists exactly the ids with an h: field; queued = ZCARD queue = the
--     number of q: fields; each request id has at most one of h:, q:, d:;
--   * slot indices: each index below next is held by one lease, or is in free (if below the
--     limit), or is retired (at or above the limit since it shrank); no index from next up is
--     held. So limit - used indices below the limit are free to hand out: those in free, and
--     next, next + 1, ... up to the limit;
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
-- machine each command a call runs costs microseconds. So the state hash is read once (HMGET of
-- the counters and of the first request's three fields) and written once at the end (HSET of
-- what changed, and HDEL of what went away); the leases are listed in a field, and each
-- waiter's expiry is in its record, rather than in sorted sets of their own; a lease's tokens
-- come from one counter, not a field per slot; expired leases, abandoned waiters and old
-- tombstones are swept only when `due` says one may be due (reading every lease and waiter
-- then), and tombstones in batches (they may outlive their time by a quarter of it). An
-- uncontended acquire runs 3 commands (TIME, HMGET, HSET), its release 5.
--
-- Every reply begins with {limit, used, queued, server time in ms}. Requests settled by a call
-- their owner did not make are published on the wake-up channel each one was queued with: the
-- server time, then for each one 'id|granted|expiry|slot:token,...' or 'id|outcome',
-- space-separated.

-- The state of the call in progress. Redis runs one call at a time, and `semaphore` sets all of
-- these first; they live out here so that the helpers below are made once, when Redis loads the
-- library, not again on every call.
local STATE, QUEUE, DONE
local channel, tombstoneMs, slackMs
local now, nowText, lim, used, queued, holders, nextSlot, free, token, seq, due, quarantine
-- Tables kept from call to call (emptied first), since making a table costs as much as a command.
local known = {}     -- state field -> its value in Redis (false: absent), as read by this call
local pending = {}   -- state field -> its new value (false: delete it), written at the end
local announced = {} -- wake-up channel -> list of entries
local before         -- the counters as read, to write back only those that changed

local function int(x)
  return string.format('%d', x)
end

local function clear(t)
  for k in pairs(t) do
    t[k] = nil
  end
end

-- Runs `command key ...` over `list` in pieces Lua's stack can take.
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

local function deadline(at)
  if at < due then
    due = at
  end
end

local function tombstone(id, outcome)
  pending['d:' .. id] = outcome
  redis.call('ZADD', DONE, now + tombstoneMs, id)
  deadline(now + tombstoneMs + slackMs)
end

local function removeWaiter(id)
  redis.call('ZREM', QUEUE, id)
  pending['q:' .. id] = false
  queued = queued - 1
end

-- A lease record's weight, expiry, granted-at, tokens ('slot:token,...') and owner.
local function parseLease(record)
  local w, e, a, t, o = string.match(record, '^(%d+)|(%d+)|(%d+)|([^|]*)|(.*)$')
  return tonumber(w), e, a, t, o
end

-- A waiter record's weight, lease ms, queued-at, abandoned-at, wake-up channel and owner.
local function parseWaiter(record)
  local w, l, a, x, c, o = string.match(record, '^(%d+)|(%d+)|(%d+)|(%d+)|([^|]*)|(.*)$')
  return tonumber(w), tonumber(l), a, tonumber(x), c, o
end

local function waiterRecord(weight, leaseMs, queuedAt, abandonAt, wakeChannel, owner)
  return weight .. '|' .. leaseMs .. '|' .. queuedAt .. '|' .. abandonAt .. '|' .. wakeChannel
    .. '|' .. owner
end

-- `list` (ids, each after a space) without `id`.
local function withoutId(list, id)
  local from = 1
  while true do
    local at = string.find(list, ' ' .. id, from, true)
    local after = at + #id + 1
    if after > #list or string.byte(list, after) == 32 then
      return string.sub(list, 1, at - 1) .. string.sub(list, after)
    end
    from = after -- a longer id that begins with this one
  end
end

-- The ids in `holders`.
local function holderIds()
  local ids = {}
  for id in string.gmatch(holders, '%S+') do
    ids[#ids + 1] = id
  end
  return ids
end

-- The records of `ids` under `prefix` ('h:' or 'q:'), in order, as this call has left them.
local function records(prefix, ids)
  local fields = {}
  for i, id in ipairs(ids) do
    fields[i] = prefix .. id
  end
  local values = {}
  for i = 1, #fields, 4000 do
    local piece = redis.call('HMGET', STATE, unpack(fields, i, math.min(i + 3999, #fields)))
    for k, value in ipairs(piece) do
      local field = fields[i + k - 1]
      local changed = pending[field]
      if changed == nil then
        values[i + k - 1] = value
      else
        values[i + k - 1] = changed
      end
    end
  end
  return values
end

local function announce(wakeChannel, entry)
  local list = announced[wakeChannel]
  if not list then
    list = {}
    announced[wakeChannel] = list
  end
  list[#list + 1] = entry
end

-- Takes up to `count` slot indices from the front of `free`.
local function takeFree(count)
  local taken = {}
  local at = 1
  while #taken < count and at <= #free do
    local comma = string.find(free, ',', at, true)
    local stop = comma and comma - 1 or #free
    taken[#taken + 1] = string.sub(free, at, stop)
    at = stop + 2
  end
  free = string.sub(free, at)
  return taken
end

local function addFree(slots)
  if #slots > 0 then
    local joined = table.concat(slots, ',')
    free = free == '' and joined or free .. ',' .. joined
  end
end

-- Gives back the slots of the lease `id` (whose record is given) and tombstones it.
local function freeLease(id, record, outcome)
  local weight, _, _, tokens = parseLease(record)
  local back = {}
  for slot in string.gmatch(tokens, '(%d+):') do
    if tonumber(slot) < lim then
      back[#back + 1] = slot
    end
  end
  addFree(back)
  holders = withoutId(holders, id)
  pending['h:' .. id] = false
  tombstone(id, outcome)
  used = used - weight
end

-- Grants `weight` permits to `id`, the caller having checked they fit; returns 'expiry',
-- 'slot:token,...'.
local function grant(id, weight, leaseMs, owner)
  local slots = takeFree(weight)
  while #slots < weight do
    slots[#slots + 1] = int(nextSlot)
    nextSlot = nextSlot + 1
  end
  token = math.max(token, now * 1000 - 1)
  for i, slot in ipairs(slots) do
    token = token + 1
    slots[i] = slot .. ':' .. int(token)
  end
  local expiry = int(now + leaseMs)
  local tokens = table.concat(slots, ',')
  pending['h:' .. id] = weight .. '|' .. expiry .. '|' .. nowText .. '|' .. tokens .. '|' .. owner
  holders = holders .. ' ' .. id
  deadline(now + leaseMs)
  used = used + weight
  return expiry, tokens
end

-- Grants the head of the queue while it fits; fails a head larger than the limit.
local function grantHead()
  while queued > 0 do
    local head = redis.call('ZRANGE', QUEUE, 0, 0)[1]
    local weight, leaseMs, _, _, wakeChannel, owner = parseWaiter(get('q:' .. head))
    if weight > lim then
      removeWaiter(head)
      tombstone(head, 'toobig')
      announce(wakeChannel, head .. '|toobig')
    else
      local need = weight
      if need == 0 then
        need = lim -- awaitIdle: the whole limit, given straight back
      end
      if lim - used < need or now < quarantine then
        return
      end
      removeWaiter(head)
      if weight == 0 then
        tombstone(head, 'idle')
        announce(wakeChannel, head .. '|idle')
      else
        local expiry, tokens = grant(head, weight, leaseMs, owner)
        announce(wakeChannel, head .. '|granted|' .. expiry .. '|' .. tokens)
      end
    end
  end
end

local function sweep()
  if now < due then
    return
  end
  -- the next sweep: when the first lease or waiter expires, or tombstone (plus slack) falls due
  due = now + 86400000
  if now < quarantine then
    deadline(quarantine)
  end
  local ids = holderIds()
  for i, lease in ipairs(records('h:', ids)) do
    local _, expiry = parseLease(lease)
    if tonumber(expiry) <= now then
      freeLease(ids[i], lease, 'expired')
    else
      deadline(tonumber(expiry))
    end
  end
  if queued > 0 then
    ids = redis.call('ZRANGE', QUEUE, 0, -1)
    for i, waiter in ipairs(records('q:', ids)) do
      local _, _, _, abandonAt = parseWaiter(waiter)
      if abandonAt <= now then
        removeWaiter(ids[i])
        tombstone(ids[i], 'abandoned')
      else
        deadline(abandonAt)
      end
    end
  end
  local old = redis.call('ZRANGEBYSCORE', DONE, '-inf', now)
  if #old > 0 then
    for _, id in ipairs(old) do
      pending['d:' .. id] = false
    end
    redis.call('ZREMRANGEBYSCORE', DONE, '-inf', now)
  end
  local first = redis.call('ZRANGE', DONE, 0, 0, 'WITHSCORES')[2]
  if first then
    deadline(tonumber(first) + slackMs)
  end
  grantHead()
end

local function leaseItem(id, record)
  local _, expiry, _, tokens = parseLease(record)
  return {id, 'granted', expiry, tokens}
end

-- How a request ended, for an operation that finds it neither held nor waiting.
local function outcomeOf(id)
  return get('d:' .. id) or 'unknown'
end

-- One request: granted, queued (with its place), busy (try only), or its outcome if it is over.
local function request(id, weight, leaseMs, owner, trying, waiterMs)
  local lease = get('h:' .. id)
  if lease then
    return leaseItem(id, lease)
  end
  local waiter = get('q:' .. id)
  if waiter then -- still waiting: it is alive for another waiter expiry
    local w, l, queuedAt, _, wakeChannel, o = parseWaiter(waiter)
    pending['q:' .. id] = waiterRecord(w, l, queuedAt, now + waiterMs, wakeChannel, o)
    return {id, 'queued', redis.call('ZRANK', QUEUE, id)}
  end
  local outcome = get('d:' .. id)
  if outcome then
    return {id, outcome}
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
    local expiry, tokens = grant(id, weight, leaseMs, owner)
    return {id, 'granted', expiry, tokens}
  end
  if trying then
    return {id, 'busy'}
  end
  seq = seq + 1
  redis.call('ZADD', QUEUE, seq, id)
  pending['q:' .. id] = waiterRecord(weight, leaseMs, nowText, now + waiterMs, channel, owner)
  deadline(now + waiterMs)
  queued = queued + 1
  return {id, 'queued', queued - 1}
end

-- Adds a counter to `writes` if it changed. (Redis writes an integral number as an integer.)
local function changed(writes, i, field, value)
  if value ~= before[i] then
    writes[#writes + 1] = field
    writes[#writes + 1] = value
  end
end

-- Writes the state back, publishes the wake-ups, and puts the counters in front of the items.
local function finish(items)
  local writes, deletes = {}, {}
  changed(writes, 1, 'limit', lim)
  changed(writes, 2, 'used', used)
  changed(writes, 3, 'queued', queued)
  changed(writes, 9, 'holders', holders)
  changed(writes, 4, 'next', nextSlot)
  changed(writes, 5, 'free', free)
  changed(writes, 6, 'token', token)
  changed(writes, 7, 'seq', seq)
  changed(writes, 8, 'due', due)
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

-- Arguments 5: 'try' or 'queue'; 6: waiter ms; then id, weight, lease ms, owner per request.
function operations.acquire(args)
  local trying = args[5] == 'try'
  local waiterMs = tonumber(args[6])
  local items = {}
  for i = 7, #args, 4 do
    items[#items + 1] =
      request(args[i], tonumber(args[i + 1]), tonumber(args[i + 2]), args[i + 3], trying,
              waiterMs)
  end
  return items
end

-- Arguments 5..: request ids. Cancel withdraws a waiter or gives back a lease; release gives
-- back a lease. Either way the id is over: it is tombstoned if it was not already.
local function finishRequests(args, outcome)
  local items = {}
  for i = 5, #args do
    local id = args[i]
    local lease = get('h:' .. id)
    if lease then
      freeLease(id, lease, outcome)
      items[#items + 1] = {id, outcome}
    elseif get('q:' .. id) then
      removeWaiter(id)
      tombstone(id, outcome)
      items[#items + 1] = {id, 'withdrawn'}
    else
      local before = get('d:' .. id)
      if not before then
        tombstone(id, outcome)
      end
      items[#items + 1] = {id, before or 'unknown'}
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

-- Arguments 5: lease ms; 6..: lease ids.
function operations.renew(args)
  local leaseMs = tonumber(args[5])
  local expiry = int(now + leaseMs)
  local items = {}
  for i = 6, #args do
    local id = args[i]
    local lease = get('h:' .. id)
    if lease then
      local weight, _, grantedAt, tokens, owner = parseLease(lease)
      pending['h:' .. id] =
        weight .. '|' .. expiry .. '|' .. grantedAt .. '|' .. tokens .. '|' .. owner
      items[#items + 1] = {id, 'renewed', expiry}
    else
      items[#items + 1] = {id, outcomeOf(id)}
    end
  end
  return items
end

-- Argument 5: the new limit. Shrinking fails queued requests above it and retires the slot
-- indices at or above it; held permits stay held until released. Growing brings back the
-- retired indices below the new limit that no lease holds.
function operations.limit(args)
  local new = tonumber(args[5])
  if new < lim then
    local kept = {}
    for slot in string.gmatch(free, '%d+') do
      if tonumber(slot) < new then
        kept[#kept + 1] = slot
      end
    end
    free = table.concat(kept, ',')
    for _, id in ipairs(redis.call('ZRANGE', QUEUE, 0, -1)) do
      local weight, _, _, _, wakeChannel = parseWaiter(get('q:' .. id))
      if weight > new then
        removeWaiter(id)
        tombstone(id, 'toobig')
        announce(wakeChannel, id .. '|toobig')
      end
    end
  elseif new > lim and nextSlot > lim then
    local held = {}
    for _, lease in ipairs(records('h:', holderIds())) do
      local _, _, _, tokens = parseLease(lease)
      for slot in string.gmatch(tokens, '(%d+):') do
        held[tonumber(slot)] = true
      end
    end
    local back = {}
    for slot = lim, math.min(nextSlot, new) - 1 do
      if not held[slot] then
        back[#back + 1] = int(slot)
      end
    end
    addFree(back)
  end
  lim = new
  grantHead()
  return {}
end

-- Holders (soonest expiry first) and waiters (in queue order), each as {id, weight, granted or
-- queued at ms, owner, expiry ms (holders) or '' (waiters), tokens 'slot:token,...' or ''}.
function operations.status(args)
  local leases = {}
  local ids = holderIds()
  for i, lease in ipairs(records('h:', ids)) do
    local weight, expiry, grantedAt, tokens, owner = parseLease(lease)
    leases[i] = {ids[i], weight, grantedAt, owner, expiry, tokens}
  end
  table.sort(leases, function(a, b) return tonumber(a[5]) < tonumber(b[5]) end)
  local waiters = {}
  ids = redis.call('ZRANGE', QUEUE, 0, -1)
  for i, waiter in ipairs(records('q:', ids)) do
    local weight, _, queuedAt, _, _, owner = parseWaiter(waiter)
    waiters[i] = {ids[i], weight, queuedAt, owner, '', ''}
  end
  return {leases, waiters}
end

function operations.counts(args)
  return {}
end

-- Where each operation's first request id is: its three fields are read with the counters.
local FIRST_ID = {acquire = 7, release = 5, cancel = 5, renew = 6}

-- One call: reads the clock and the counters, sweeps what fell due, runs the operation, writes
-- the state back.
local function semaphore(keys, args)
  STATE, QUEUE, DONE = keys[1], keys[2], keys[3]
  channel = args[3]
  tombstoneMs = tonumber(args[4])
  slackMs = math.floor(tombstoneMs / 4)
  clear(known)
  clear(pending)
  clear(announced)
  local operation = operations[args[1]]
  if not operation then
    return redis.error_reply('jeton: unknown operation ' .. tostring(args[1]))
  end
  local clock = redis.call('TIME')
  now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
  nowText = int(now)
  local first = args[FIRST_ID[args[1]] or #args + 1] or ''
  before = redis.call('HMGET', STATE, 'limit', 'used', 'queued', 'next', 'free', 'token', 'seq',
    'due', 'holders', 'h:' .. first, 'q:' .. first, 'd:' .. first, 'until')
  known['h:' .. first], known['q:' .. first], known['d:' .. first] =
    before[10], before[11], before[12]
  quarantine = tonumber(before[13]) or 0
  if before[1] then
    lim, used, queued = tonumber(before[1]), tonumber(before[2]), tonumber(before[3])
    nextSlot, free, token = tonumber(before[4]), before[5], tonumber(before[6])
    seq, due, holders = tonumber(before[7]), tonumber(before[8]), before[9]
    for i = 1, 8 do
      if i ~= 5 then
        before[i] = tonumber(before[i])
      end
    end
  else
    local create, quarantineMs = string.match(args[2], '^(-?%d+)/?(%d*)$')
    lim = tonumber(create)
    if lim < 0 then
      return {-1, 0, 0, nowText}
    end
    used, queued, nextSlot, free, token, seq, due, holders = 0, 0, 0, '', 0, 0, now, ''
    -- The queue and the tombstone index went with the records they point to if only the state
    -- key was lost (a DEL, an eviction): a head without its record would fail every call. Live
    -- waiters queue again at their next poll, as after a restart.
    redis.call('DEL', QUEUE, DONE)
    if quarantineMs ~= '' then -- recreated: see Recreation above
      quarantine = now + tonumber(quarantineMs)
      pending['until'] = int(quarantine)
    end
  end
  sweep()
  return finish(operation(args))
end
