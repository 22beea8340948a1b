-- Jeton's fleet-wide semaphore. Every state change is one call of this script, so each is
-- atomic; the operation is ARGV[1]. All keys share one hash tag (Redis Cluster). Time is the
-- Redis server's clock (TIME), never a client's.
--
-- KEYS
--   1 meta     hash   limit; next (lowest slot index never handed out since the limit last
--                     shrank); seq (arrival counter)
--   2 holders  hash   lease id -> lease record (JSON: w weight, s slots, t tokens, e expiry ms,
--                     l lease ms, o owner, a granted-at ms)
--   3 lexp     zset   lease id -> expiry ms
--   4 queue    zset   request id -> arrival number: the FIFO queue of waiters
--   5 waiters  hash   request id -> waiter record (JSON: w weight, 0 = awaitIdle; l lease ms;
--                     o owner; a queued-at ms)
--   6 wexp     zset   request id -> ms at which the waiter counts as dead unless it polls again
--   7 slots    hash   slot index -> lease id, one field per permit held
--   8 free     zset   free slot indices below meta.next (score = index)
--   9 tokens   hash   slot index -> last fencing token handed out with that slot
--  10 done     hash   request id -> outcome (released, cancelled, expired, abandoned, toobig,
--                     idle): a tombstone that stops a replayed or late request from acting again
--  11 dexp     zset   request id -> ms at which its tombstone may be forgotten
--
-- ARGV: 1 operation, 2 limit to create the semaphore with if it does not exist (-1: do not
-- create), 3 wake-up channel, 4 tombstone ms, then the operation's own arguments.
--
-- Invariants, after every call:
--   * used = HLEN slots = the sum of the holders' weights, and a new grant needs used + w <= limit
--     (so never more than the limit is held, in this server's view);
--   * every slot index below min(next, limit) is either in slots (held) or in free, never both;
--     indices from next up are free unless held; so there are always limit - used free indices
--     below the limit to hand out;
--   * the head of the queue is never grantable when a call returns (grantHead runs last);
--   * a request id acts once: a released, cancelled or expired id stays in done until its
--     tombstone expires, and an id in done is never queued or granted again.
-- Every reply begins with {limit, used, queued, server time in ms}; request ids whose state changed are published
-- on the channel, space-separated, so that their owners poll at once.

local META, HOLDERS, LEXP, QUEUE, WAITERS, WEXP, SLOTS, FREE, TOKENS, DONE, DEXP =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11]

local op = ARGV[1]
local limitIfNew = tonumber(ARGV[2])
local channel = ARGV[3]
local tombstoneMs = tonumber(ARGV[4])

local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)

local changed = {}

local function int(x)
  return string.format('%d', x)
end

local function limit()
  local value = redis.call('HGET', META, 'limit')
  if value then
    return tonumber(value)
  end
  if limitIfNew < 0 then
    return -1
  end
  redis.call('HSET', META, 'limit', int(limitIfNew), 'next', '0')
  return limitIfNew
end

local function used()
  return redis.call('HLEN', SLOTS)
end

local function tombstone(id, outcome)
  redis.call('HSET', DONE, id, outcome)
  redis.call('ZADD', DEXP, now + tombstoneMs, id)
end

-- A waiting request's state changed in a call its owner did not make: tell the owner.
local function announce(id)
  changed[#changed + 1] = id
end

local function removeWaiter(id)
  redis.call('ZREM', QUEUE, id)
  redis.call('HDEL', WAITERS, id)
  redis.call('ZREM', WEXP, id)
end

-- Gives back a lease's slots; false if there is no such lease.
local function freeLease(id, outcome)
  local record = redis.call('HGET', HOLDERS, id)
  if not record then
    return false
  end
  local lease = cjson.decode(record)
  local next = tonumber(redis.call('HGET', META, 'next') or '0')
  for _, slot in ipairs(lease.s) do
    redis.call('HDEL', SLOTS, slot)
    if slot < next then
      redis.call('ZADD', FREE, slot, slot)
    end
  end
  redis.call('HDEL', HOLDERS, id)
  redis.call('ZREM', LEXP, id)
  tombstone(id, outcome)
  return true
end

-- The lowest free slot indices; the caller has checked that enough are free.
local function takeSlots(count)
  local taken = {}
  local popped = redis.call('ZPOPMIN', FREE, count)
  for i = 1, #popped, 2 do
    taken[#taken + 1] = tonumber(popped[i])
  end
  local next = tonumber(redis.call('HGET', META, 'next') or '0')
  while #taken < count do
    if redis.call('HEXISTS', SLOTS, next) == 0 then
      taken[#taken + 1] = next
    end
    next = next + 1
  end
  redis.call('HSET', META, 'next', int(next))
  return taken
end

-- A slot's next fencing token: above every token it had, and at least the server's time in
-- microseconds, so tokens keep growing even after a restart that lost the data.
local function nextToken(slot)
  local last = tonumber(redis.call('HGET', TOKENS, slot) or '0')
  local token = math.max(last + 1, now * 1000)
  redis.call('HSET', TOKENS, slot, int(token))
  return int(token)
end

local function grant(id, weight, leaseMs, owner)
  local slots = takeSlots(weight)
  local tokens = {}
  for i, slot in ipairs(slots) do
    redis.call('HSET', SLOTS, slot, id)
    tokens[i] = nextToken(slot)
  end
  local expiry = now + leaseMs
  redis.call('HSET', HOLDERS, id,
    cjson.encode({w = weight, s = slots, t = tokens, e = int(expiry), l = leaseMs, o = owner,
                  a = int(now)}))
  redis.call('ZADD', LEXP, expiry, id)
end

local function sweep()
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', LEXP, '-inf', now)) do
    freeLease(id, 'expired')
  end
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', WEXP, '-inf', now)) do
    removeWaiter(id)
    tombstone(id, 'abandoned')
  end
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', DEXP, '-inf', now)) do
    redis.call('HDEL', DONE, id)
  end
  redis.call('ZREMRANGEBYSCORE', DEXP, '-inf', now)
end

-- Grants the head of the queue while it fits; fails a head larger than the limit.
local function grantHead(lim)
  while true do
    local head = redis.call('ZRANGE', QUEUE, 0, 0)[1]
    if not head then
      return
    end
    local waiter = cjson.decode(redis.call('HGET', WAITERS, head))
    if waiter.w > lim then
      removeWaiter(head)
      tombstone(head, 'toobig')
      announce(head)
    else
      local weight = waiter.w
      if weight == 0 then
        weight = lim -- awaitIdle: the whole limit, given straight back
      end
      if lim - used() < weight then
        return
      end
      removeWaiter(head)
      if waiter.w == 0 then
        tombstone(head, 'idle')
      else
        grant(head, waiter.w, waiter.l, waiter.o)
      end
      announce(head)
    end
  end
end

local function leaseReply(id)
  local lease = cjson.decode(redis.call('HGET', HOLDERS, id))
  local tokens = {}
  for i, slot in ipairs(lease.s) do
    tokens[i] = int(slot) .. ':' .. lease.t[i]
  end
  return {id, 'granted', lease.e, table.concat(tokens, ',')}
end

-- One request: granted, queued (with its place), busy (try only), or its outcome if it is over.
local function request(id, weight, leaseMs, owner, trying, waiterMs, lim)
  if redis.call('HEXISTS', HOLDERS, id) == 1 then
    return leaseReply(id)
  end
  local outcome = redis.call('HGET', DONE, id)
  if outcome then
    return {id, outcome}
  end
  if weight > lim then
    return {id, 'toobig'}
  end
  if redis.call('HEXISTS', WAITERS, id) == 1 then
    redis.call('ZADD', WEXP, now + waiterMs, id)
    return {id, 'queued', redis.call('ZRANK', QUEUE, id)}
  end
  local need = weight
  if need == 0 then
    need = lim
  end
  if redis.call('ZCARD', QUEUE) == 0 and lim - used() >= need then
    if weight == 0 then
      return {id, 'idle'}
    end
    grant(id, weight, leaseMs, owner)
    return leaseReply(id)
  end
  if trying then
    return {id, 'busy'}
  end
  local seq = redis.call('HINCRBY', META, 'seq', 1)
  redis.call('ZADD', QUEUE, seq, id)
  redis.call('HSET', WAITERS, id, cjson.encode({w = weight, l = leaseMs, o = owner, a = int(now)}))
  redis.call('ZADD', WEXP, now + waiterMs, id)
  return {id, 'queued', redis.call('ZRANK', QUEUE, id)}
end

local function finish(reply)
  if #changed > 0 then
    redis.call('PUBLISH', channel, table.concat(changed, ' '))
  end
  local lim = tonumber(redis.call('HGET', META, 'limit') or '-1')
  local head = {lim, used(), redis.call('ZCARD', QUEUE), int(now)}
  for _, item in ipairs(reply) do
    head[#head + 1] = item
  end
  return head
end

local lim = limit()
if lim < 0 then
  return {-1, 0, 0, int(now)}
end
sweep()
grantHead(lim)

if op == 'acquire' then
  -- ARGV 5: 'try' or 'queue'; 6: waiter ms; then id, weight, lease ms, owner for each request.
  local trying = ARGV[5] == 'try'
  local waiterMs = tonumber(ARGV[6])
  local replies = {}
  for i = 7, #ARGV, 4 do
    replies[#replies + 1] =
      request(ARGV[i], tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2]), ARGV[i + 3], trying,
              waiterMs, lim)
  end
  return finish(replies)

elseif op == 'release' or op == 'cancel' then
  -- ARGV 5..: request ids. Cancel withdraws a waiter or gives back a lease; release gives back
  -- a lease. Either way the id is over: it is tombstoned if it was not already.
  local outcome = 'released'
  if op == 'cancel' then
    outcome = 'cancelled'
  end
  local replies = {}
  for i = 5, #ARGV do
    local id = ARGV[i]
    local before = redis.call('HGET', DONE, id)
    if freeLease(id, outcome) then
      replies[#replies + 1] = {id, op == 'release' and 'released' or 'cancelled'}
    elseif redis.call('HEXISTS', WAITERS, id) == 1 then
      removeWaiter(id)
      tombstone(id, outcome)
      replies[#replies + 1] = {id, 'withdrawn'}
    else
      if not before then
        tombstone(id, outcome)
      end
      replies[#replies + 1] = {id, before or 'unknown'}
    end
  end
  grantHead(lim)
  return finish(replies)

elseif op == 'renew' then
  -- ARGV 5: lease ms; 6..: lease ids.
  local leaseMs = tonumber(ARGV[5])
  local replies = {}
  for i = 6, #ARGV do
    local id = ARGV[i]
    local record = redis.call('HGET', HOLDERS, id)
    if record then
      local lease = cjson.decode(record)
      lease.e = int(now + leaseMs)
      redis.call('HSET', HOLDERS, id, cjson.encode(lease))
      redis.call('ZADD', LEXP, now + leaseMs, id)
      replies[#replies + 1] = {id, 'renewed', lease.e}
    else
      replies[#replies + 1] = {id, redis.call('HGET', DONE, id) or 'unknown'}
    end
  end
  return finish(replies)

elseif op == 'limit' then
  -- ARGV 5: the new limit. Shrinking fails queued requests above it and retires slot indices
  -- at or above it; held permits stay held until released.
  local new = tonumber(ARGV[5])
  redis.call('HSET', META, 'limit', int(new))
  if new < lim then
    redis.call('ZREMRANGEBYSCORE', FREE, new, '+inf')
    local next = tonumber(redis.call('HGET', META, 'next') or '0')
    if next > new then
      redis.call('HSET', META, 'next', int(new))
    end
    for _, id in ipairs(redis.call('ZRANGE', QUEUE, 0, -1)) do
      if cjson.decode(redis.call('HGET', WAITERS, id)).w > new then
        removeWaiter(id)
        tombstone(id, 'toobig')
        announce(id)
      end
    end
  end
  grantHead(new)
  return finish({})

elseif op == 'status' then
  -- Holders (soonest expiry first) and waiters (in queue order), each as {id, weight, granted or
  -- queued at ms, owner, expiry ms (holders) or '' (waiters), tokens 'slot:token,...' or ''}.
  local holders = {}
  for _, id in ipairs(redis.call('ZRANGE', LEXP, 0, -1)) do
    local lease = leaseReply(id)
    local record = cjson.decode(redis.call('HGET', HOLDERS, id))
    holders[#holders + 1] = {id, record.w, record.a, record.o, lease[3], lease[4]}
  end
  local waiters = {}
  for _, id in ipairs(redis.call('ZRANGE', QUEUE, 0, -1)) do
    local record = cjson.decode(redis.call('HGET', WAITERS, id))
    waiters[#waiters + 1] = {id, record.w, record.a, record.o, '', ''}
  end
  return finish({holders, waiters})

elseif op == 'counts' then
  return finish({})
end

return redis.error_reply('jeton: unknown operation ' .. tostring(op))
