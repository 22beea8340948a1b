-- Jeton's fleet-wide rate limiter, as a function of the same Redis library as the semaphore
-- (Library.java registers `rate`, defined last here, beside `semaphore`). Every change is one
-- call (FCALL), so each is atomic. Time is the Redis server's clock (TIME), in microseconds,
-- never a client's. It comes after semaphore.lua and repair.lua in the library, and uses
-- semaphore.lua's locals for Redis's globals (redis, string, math...), bound at the first call.
--
-- The algorithm: GCRA with reservations. A rate of `permits` per `period` admits one unit of
-- weight every emission interval T = period / permits; the state is one value, the theoretical
-- arrival time `tat` (when the limiter would be empty again if nothing more came). A request of
-- weight w made at `now` takes tat := max(tat, now) + w*T and may pass at
-- max(now, tat - burst*T): at once if the limiter has room, else at the first instant at which
-- passing keeps the bound. Redis serves calls one at a time, so each request is given its instant
-- in the order the calls arrive: first come, first served across the fleet, heavy requests
-- included, with one call per request. The caller waits out its instant on its own clock; no one
-- asks again.
--
-- The bound: over any window of length t, the weight whose instants fall in it is at most
-- burst + t/T. The instants are those the in-process limiter (decision 108) gives the same
-- requests served in the same order, whose head passes at the first instant tat - burst*T allows;
-- rounding an instant up to the next microsecond only delays it.
--
-- Exactness. T = q + r/d microseconds, with 0 <= r < d, reduced, and tat = tatUs + tatF/d with
-- 0 <= tatF < d. Lua's numbers are doubles, exact for integers below 2^53; the handle refuses a
-- rate whose d is above 2^21 or whose burst*T is above 2^50 microseconds (35 years), so that
-- w*r, w*q, tatF + w*r and the times (1.8e15 us today) all stay exact. Integers leave as
-- %.0f, never tostring (which would give 1.8e+15).
--
-- Key: 1 the limiter's state, a string
--   '1 <permits> <periodNs> <q> <r> <d> <burst> <tatUs> <tatF>'
--   (layout 1; permits and periodNs are the rate as the user gave it, for display; q, r, d the
--   same rate as an exact interval).
--
-- Arguments: 1 operation, then
--   'a' (acquire): 2 weight, 3 most microseconds the caller will wait (-1: any; 0: a try),
--       4 the rate to create the limiter with if it does not exist ('permits periodNs q r d
--       burst', or '' to fail), 5 the latest tat the caller has seen (tatUs, 0 if it has seen
--       none; see Recreation).
--       Answer: 'A <waitUs> <tatUs> <tatF> <state fields...> <nowUs>' (reserved: pass after
--       waitUs), or 'W <waitUs> ...' (not reserved: it would wait waitUs, beyond what the caller
--       allows), or 'N' (no limiter, none created).
--   'p' (peek): as 'a' with no reservation ever: how long a request of that weight would wait.
--   'g' (give back): 2 weight, 3 tatUs, 4 tatF: the tat the caller's reservation left. If no
--       one reserved since (tat is still that), tat goes back by weight*T: the instant is free
--       for the next. Otherwise instants were given after it, which cannot move: the caller's
--       instant goes unused. Answer 'G 1' or 'G 0'.
--   'o' (open): 2 the rate to create with, as 'a' ('' to create none), 3 seen, as 'a'. Answer
--       'O 0 <tatUs> <tatF> <state fields...> <nowUs>', or 'N'.
--   'r' (set rate): 2 the new rate 'permits periodNs q r d', 3 the rate to create with, as 'a'.
--       What is owed, tat - now, drains at the new rate: it is scaled by newT/oldT, rounded up to
--       the next microsecond and one more (doubles), so a change never admits more.
--
-- Recreation. Without persistence a restart (or FLUSHALL, an eviction) loses the state while
-- requests still wait for instants it gave. A caller that has seen the state (argument 5 above
-- 0) and finds none creates it as if a full burst had just passed, and at least as late as the
-- latest tat it knows: tat = max(now + burst*T, seen). Its own waiters' instants are then before
-- any new one; other processes' may not be (each knows only its own), a window the README names.
-- A first creation (a caller that never saw it) starts empty, so first use is not slowed.
--
-- Invariants, after every call: the state reads; 0 <= r < d, 0 <= tatF < d; tat only moves
-- forward, except by a give-back of the last reservation (which restores the tat before it) and
-- by a rate change (which rescales what is owed, never below now).

local LAYOUT = '1'
local STATE_PATTERN = '^1 (%d+) (%d+) (%d+) (%d+) (%d+) (%d+) (%d+) (%d+)$'
local RATE_PATTERN = '^(%d+) (%d+) (%d+) (%d+) (%d+)$'
local CREATE_PATTERN = '^(%d+) (%d+) (%d+) (%d+) (%d+) (%d+)$'

local function int(x)
  return string.format('%.0f', x)
end

-- w*T as whole microseconds and a remainder in [0, d): w*q + floor(w*r/d), (w*r) mod d. The
-- quotient of two doubles may round across an integer, so it is corrected exactly.
local function times(w, q, r, d)
  local p = w * r
  local carry = math.floor(p / d)
  while carry * d > p do
    carry = carry - 1
  end
  while (carry + 1) * d <= p do
    carry = carry + 1
  end
  return w * q + carry, p - carry * d
end

local function damaged(key, why)
  return redis.error_reply('jeton: rate limiter ' .. key .. ' has a damaged state (' .. why
    .. '): setRate repairs it')
end

local function nowUs()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end

local function read(key)
  local text = redis.call('GET', key)
  if not text then
    return nil
  end
  if #text > 200 then
    return false
  end
  local permits, periodNs, q, r, d, burst, tatUs, tatF = string.match(text, STATE_PATTERN)
  if not permits then
    return false
  end
  local s = {permits = permits, periodNs = periodNs, q = tonumber(q), r = tonumber(r),
    d = tonumber(d), burst = tonumber(burst), tatUs = tonumber(tatUs), tatF = tonumber(tatF)}
  if s.d < 1 or s.r >= s.d or s.tatF >= s.d or s.burst < 1 or (s.q == 0 and s.r == 0) then
    return false
  end
  return s
end

local function write(key, s)
  redis.call('SET', key, table.concat({LAYOUT, s.permits, s.periodNs, int(s.q), int(s.r),
    int(s.d), int(s.burst), int(s.tatUs), int(s.tatF)}, ' '))
end

-- The state as created from the caller's 'permits periodNs q r d burst', empty, or as if a full
-- burst had just passed for a caller that has seen it (see Recreation).
local function create(spec, seenUs, now)
  local permits, periodNs, q, r, d, burst = string.match(spec, CREATE_PATTERN)
  if not permits then
    return nil
  end
  local s = {permits = permits, periodNs = periodNs, q = tonumber(q), r = tonumber(r),
    d = tonumber(d), burst = tonumber(burst), tatUs = now, tatF = 0}
  if seenUs > 0 then
    local bq, br = times(s.burst, s.q, s.r, s.d)
    s.tatUs = now + bq + (br > 0 and 1 or 0)
    if seenUs > s.tatUs then
      s.tatUs = seenUs
    end
  end
  return s
end

-- How long, from now, a request of weight w waits, and the tat it leaves if it reserves.
local function reserve(s, w, now)
  local baseUs, baseF = s.tatUs, s.tatF
  if baseUs < now then
    baseUs, baseF = now, 0
  end
  local wq, wr = times(w, s.q, s.r, s.d)
  local tatUs, tatF = baseUs + wq, baseF + wr
  if tatF >= s.d then
    tatUs, tatF = tatUs + 1, tatF - s.d
  end
  -- the instant: tat - burst*T, rounded up to a whole microsecond
  local bq, br = times(s.burst, s.q, s.r, s.d)
  local atUs, atF = tatUs - bq, tatF - br
  if atF < 0 then
    atUs, atF = atUs - 1, atF + s.d
  end
  if atF > 0 then
    atUs = atUs + 1
  end
  local wait = atUs - now
  if wait < 0 then
    wait = 0
  end
  return wait, tatUs, tatF
end

local function answer(code, wait, tatUs, tatF, s, now)
  return {table.concat({code, int(wait), int(tatUs), int(tatF), s.permits, s.periodNs,
    int(s.q), int(s.r), int(s.d), int(s.burst), int(now)}, ' ')}
end

local function acquire(key, args, peek)
  local w, maxWait = tonumber(args[2]), tonumber(args[3])
  local seen = tonumber(args[5]) or 0
  local now = nowUs()
  local s = read(key)
  if s == false then
    return damaged(key, 'it does not read')
  end
  local fresh = false
  if s == nil then
    s = create(args[4], seen, now)
    if s == nil then
      return {'N'}
    end
    fresh = true
  end
  if w > s.burst then
    return redis.error_reply('jeton: a weight of ' .. args[2] .. ' is above the burst, '
      .. int(s.burst) .. ', of rate limiter ' .. key .. ': it could never pass')
  end
  local wait, tatUs, tatF = reserve(s, w, now)
  if peek or (maxWait >= 0 and wait > maxWait) then
    if fresh and not peek then
      write(key, s)
    end
    return answer('W', wait, s.tatUs, s.tatF, s, now)
  end
  s.tatUs, s.tatF = tatUs, tatF
  write(key, s)
  return answer('A', wait, tatUs, tatF, s, now)
end

local function giveBack(key, args)
  local s = read(key)
  if not s then
    return {'G 0'}
  end
  local w, tatUs, tatF = tonumber(args[2]), tonumber(args[3]), tonumber(args[4])
  if s.tatUs ~= tatUs or s.tatF ~= tatF then
    return {'G 0'}
  end
  local wq, wr = times(w, s.q, s.r, s.d)
  s.tatUs, s.tatF = s.tatUs - wq, s.tatF - wr
  if s.tatF < 0 then
    s.tatUs, s.tatF = s.tatUs - 1, s.tatF + s.d
  end
  write(key, s)
  return {'G 1'}
end

local function setRate(key, args)
  local permits, periodNs, q, r, d = string.match(args[2], RATE_PATTERN)
  if not permits then
    return redis.error_reply('jeton: not a rate: ' .. tostring(args[2]))
  end
  q, r, d = tonumber(q), tonumber(r), tonumber(d)
  local now = nowUs()
  local s = read(key)
  if not s then
    -- missing (create it at the new rate) or damaged (repair it, as if a full burst had passed)
    s = create(args[3], s == false and 1 or tonumber(args[4]) or 0, now)
    if s == nil then
      return {'N'}
    end
    s.q, s.r, s.d = q, r, d
  else
    local owed = (s.tatUs - now) + s.tatF / s.d
    if owed > 0 then
      local scaled = owed * (q + r / d) / (s.q + s.r / s.d)
      s.tatUs, s.tatF = now + math.ceil(scaled) + 1, 0
    end
    s.q, s.r, s.d = q, r, d
  end
  s.permits, s.periodNs = permits, periodNs
  write(key, s)
  return answer('R', 0, s.tatUs, s.tatF, s, now)
end

-- Creates the limiter if it does not exist; answers its state either way.
local function open(key, args)
  local now = nowUs()
  local s = read(key)
  if s == false then
    return damaged(key, 'it does not read')
  elseif s == nil then
    s = create(args[2], tonumber(args[3]) or 0, now)
    if s == nil then
      return {'N'}
    end
    write(key, s)
  end
  return answer('O', 0, s.tatUs, s.tatF, s, now)
end

local function rate(keys, args)
  if not globalsBound then
    bindGlobals() -- semaphore.lua's locals for Redis's globals; see there
  end
  local op = args[1]
  if op == 'o' then
    return open(keys[1], args)
  elseif op == 'a' then
    return acquire(keys[1], args, false)
  elseif op == 'p' then
    return acquire(keys[1], args, true)
  elseif op == 'g' then
    return giveBack(keys[1], args)
  elseif op == 'r' then
    return setRate(keys[1], args)
  end
  return redis.error_reply('jeton: unknown rate operation ' .. tostring(op))
end
