-- Jeton's fleet-wide semaphore, continued: what it does with damaged state (see Damage in
-- semaphore.lua), and `semaphore`, the function Redis calls, which runs a call and repairs.
-- Library.java puts this file after semaphore.lua, in one library: all of that is in scope here.

-- What damage an error says, or nil if it is no damage (Redis out of memory, a bug here). A
-- command on a key of the wrong type fails with WRONGTYPE (as text up to Redis 7.0, as a table
-- from 7.2).
local function damageIn(failure)
  local text = type(failure) == 'table' and failure.err or failure
  if type(text) ~= 'string' then
    return nil
  end
  if string.sub(text, 1, #DAMAGE) == DAMAGE then
    return string.sub(text, #DAMAGE + 1)
  end
  if string.find(text, 'WRONGTYPE', 1, true) then
    return 'a key holds the wrong kind of value'
  end
  return nil
end

-- Deletes `key` if it holds another kind of value than `kind`; says so in `said`.
local function dropIfNot(key, kind, said)
  local found = redis.call('TYPE', key)
  found = type(found) == 'table' and found.ok or found
  if found ~= 'none' and found ~= kind then
    redis.call('DEL', key)
    said[#said + 1] = key .. ' was a ' .. found .. ', deleted'
    return true
  end
  return false
end

-- A sorted set's members and scores, as a table; empty if it is not there.
local function scoresOf(key, lost)
  local byMember = {}
  if not lost then
    local flat = redis.call('ZRANGE', key, 0, -1, 'WITHSCORES')
    for i = 1, #flat, 2 do
      byMember[flat[i]] = tonumber(flat[i + 1])
    end
  end
  return byMember
end

-- Repairs damaged state (see Damage above), and says so in Redis's log. Returns an error reply
-- instead when the limit does not read, unless this call sets it: nothing else records it.
local function repair(problem, args)
  local said = {}
  dropIfNot(STATE, 'hash', said)
  local queueLost = dropIfNot(QUEUE, 'zset', said)
  local timersLost = dropIfNot(TIMERS, 'zset', said)
  dropIfNot(SPARE, 'list', said)
  local flat = redis.call('HGETALL', STATE)
  local function report()
    redis.log(redis.LOG_WARNING, 'jeton: semaphore ' .. STATE .. ' was damaged (' .. problem
      .. ')' .. (#said > 0 and ': ' .. table.concat(said, '; ') or ''))
  end
  if #flat == 0 then
    redis.call('DEL', QUEUE, TIMERS, SPARE) -- the call recreates it, as after a loss
    said[#said + 1] = 'recreated'
    report()
    return nil
  end
  local fields = {}
  for i = 1, #flat, 2 do
    fields[flat[i]] = flat[i + 1]
  end
  local limit = readLimit(fields.limit)
  if not limit and args[1] == 'limit' then
    limit = tonumber(args[6])
  end
  if not limit then
    said[#said + 1] = 'refused: its limit does not read'
    report()
    return redis.error_reply('jeton: semaphore ' .. STATE .. ' has a damaged limit: set it'
      .. ' again (setLimit, or jeton limit --name ' .. string.match(STATE, '^{[^:]*:(.*)}:state$')
      .. ' N)')
  end
  -- The records: those that read, and the ids of those that do not, which end as 'damaged'.
  local leases, waiters, ended, strays, owners = {}, {}, {}, {}, {}
  local highestSlot, highestToken, held = -1, 0, 0
  for i = 1, #flat, 2 do
    local field, record = flat[i], flat[i + 1]
    local id = string.match(field, '^r:(.+)$')
    if id and #id > MAX_ID then -- no client made it: like a field not the semaphore's
      id = nil
    end
    if id and oversized(record) then
      ended[#ended + 1] = id
    elseif id and string.sub(record, 1, 2) == 'H|' then
      local w, expiry, _, tokens = string.match(record, LEASE)
      local slots = {}
      for slot, tokenText in string.gmatch(tokens or '', '(%d+):(%d+)') do
        slots[#slots + 1] = tonumber(slot)
        highestToken = math.max(highestToken, tonumber(tokenText))
      end
      local fine = w and #slots == tonumber(w) and not tooFarAhead(expiry)
      for _, slot in ipairs(slots) do
        fine = fine and not owners[slot] -- a slot two leases claim goes to the first
      end
      if fine then
        for _, slot in ipairs(slots) do
          owners[slot] = id
          highestSlot = math.max(highestSlot, slot)
        end
        leases[#leases + 1] = {id, tonumber(expiry)}
        held = held + tonumber(w)
      else
        ended[#ended + 1] = id
      end
    elseif id and string.match(record, WAITER) then
      waiters[#waiters + 1] = {id, tonumber(string.match(record, '^Q|%d+|%d+|(%d+)|'))}
    elseif id and string.match(record, TOMBSTONE) then -- a tombstone: timed below
    elseif id then
      ended[#ended + 1] = id
    elseif field ~= 'limit' and field ~= 'layout' and field ~= 'c' then
      strays[#strays + 1] = field
    end
  end
  -- The queue, in its order as far as it survives, then by when each waiter queued.
  local order = scoresOf(QUEUE, queueLost)
  table.sort(waiters, function(a, b)
    local x, y = order[a[1]] or FAR, order[b[1]] or FAR
    if x ~= y then
      return x < y
    end
    if a[2] ~= b[2] then
      return a[2] < b[2]
    end
    return a[1] < b[1]
  end)
  redis.call('DEL', QUEUE)
  local entries = {}
  for i, waiter in ipairs(waiters) do
    entries[#entries + 1] = i
    entries[#entries + 1] = waiter[1]
  end
  inPieces('ZADD', QUEUE, entries)
  -- The timers: a lease's expiry; a waiter's and a tombstone's as they were, or anew.
  local was = scoresOf(TIMERS, timersLost)
  redis.call('DEL', TIMERS)
  local timers, writes = {}, {}
  local function time(id, score)
    timers[#timers + 1] = int(score)
    timers[#timers + 1] = id
  end
  for _, lease in ipairs(leases) do
    time(lease[1], lease[2])
  end
  for _, waiter in ipairs(waiters) do
    local score = was[waiter[1]]
    time(waiter[1], score and score < BAND and not tooFarAhead(score) and score or now + waiterMs)
  end
  for i = 1, #flat, 2 do
    local id = string.match(flat[i], '^r:(.+)$')
    if id and string.match(flat[i + 1], TOMBSTONE) then
      local score = was[id]
      time(id, score and score >= BAND and score or BAND + now + tombstoneMs)
    end
  end
  for _, id in ipairs(ended) do
    writes[#writes + 1] = 'r:' .. id
    writes[#writes + 1] = 'D|damaged'
    time(id, BAND + now + tombstoneMs)
  end
  inPieces('ZADD', TIMERS, timers)
  -- The free slots: every index below both next and the limit that no lease holds.
  local _, _, n, _, t, _, _, _, un = string.match(fields.c or '', COUNTERS)
  local next_ = math.max(tonumber(n) or 0, highestSlot + 1)
  local free = {}
  for slot = 0, math.min(next_, limit) - 1 do
    if not owners[slot] then
      free[#free + 1] = int(slot)
    end
  end
  local hotFree, spareFree = {}, {}
  for i, slot in ipairs(free) do
    if i <= HOT then
      hotFree[i] = slot
    else
      spareFree[#spareFree + 1] = slot
    end
  end
  redis.call('DEL', SPARE)
  inPieces('RPUSH', SPARE, spareFree)
  -- Tokens go on from the last one handed out, if it reads, else from a second past the clock
  -- (no grant can have run that far ahead of it); a quarantine in force stays in force.
  local quarantineMs = string.match(args[2], '/(%d+)$')
  local counters = string.format('%d|%d|%d|%d|%d|%d|%d|%d|%d|%s', held, #waiters, next_,
    #spareFree, math.max(tonumber(t) or (now + 1000) * 1000, highestToken), #waiters, now, now,
    tonumber(un) or (quarantineMs and now + tonumber(quarantineMs) or 0),
    table.concat(hotFree, ','))
  for _, field in ipairs({'limit', int(limit), 'layout', '2', 'c', counters}) do
    writes[#writes + 1] = field
  end
  inPieces('HSET', STATE, writes)
  inPieces('HDEL', STATE, strays)
  said[#said + 1] = 'rebuilt from ' .. #leases .. ' leases and ' .. #waiters .. ' waiters'
  if #ended > 0 then
    said[#said + 1] = #ended .. ' records that did not read ended as damaged: '
      .. table.concat(ended, ', ', 1, math.min(#ended, 10))
  end
  if #strays > 0 then
    said[#said + 1] = #strays .. ' fields not its own deleted'
  end
  report()
  return nil
end

-- A call, and if it meets damage, the repair and the call again. Every operation acts once per
-- request id, so what the first attempt wrote before it met the damage is found done, as a
-- replay would find it; and the repair rebuilds from the records what it left half done (a
-- queue entry removed, slots taken from the spare list). Damage met again is an error.
local function semaphore(keys, args)
  if not globalsBound then
    bindGlobals()
  end
  local ok, result = pcall(call, keys, args)
  if ok then
    return result
  end
  local problem = damageIn(result)
  if not problem then
    error(result, 0)
  end
  local refused = repair(problem, args)
  if refused then
    return refused
  end
  return call(keys, args)
end
