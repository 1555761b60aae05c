import type { RunFrame } from '../run_log.ts'

/**
 * The Lua scripts and the frame encoding of the Redis run log. A stream
 * entry is `<seq>-0` with fields `e` (event name, empty for a delta) and
 * `d` (data JSON); a published message is `seq\nevent\ndata`.
 */

/**
 * Renews the lease: -1 when another instance holds it or readers already
 * ended the run (its lease had lapsed), else whether a cancel was requested.
 * A lease that merely expired (a long pause) is taken back. A renewed run's
 * entry among the live leases (KEYS[4]) moves to its new expiry (ARGV[3]).
 */
export const RENEW_SCRIPT = `
local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] then return -1 end
if not holder then
  local last = redis.call('XREVRANGE', KEYS[3], '+', '-', 'COUNT', 1)
  if #last > 0 then
    local fields = last[1][2]
    for i = 1, #fields, 2 do
      if fields[i] == 'e' and (fields[i + 1] == 'done' or fields[i + 1] == 'error') then return -1 end
    end
  end
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('ZADD', KEYS[4], ARGV[3], ARGV[4])
return redis.call('EXISTS', KEYS[2])`

/**
 * Ends a run whose lease lapsed with a stored run_failed frame, unless the
 * lease is back or the run already ended; the first reader to run it wins.
 */
export const LAPSE_SCRIPT = `
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
if #last == 0 then return 0 end
local fields = last[1][2]
for i = 1, #fields, 2 do
  if fields[i] == 'e' and (fields[i + 1] == 'done' or fields[i + 1] == 'error') then return 0 end
end
local seq = tonumber(string.match(last[1][1], '^(%d+)')) + 1
redis.call('XADD', KEYS[1], seq .. '-0', 'e', 'error', 'd', ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('PUBLISH', KEYS[3], seq .. '\\nerror\\n' .. ARGV[1])
return seq`

export const LAPSED_FRAME = JSON.stringify({
  code: 'run_failed',
  message: 'The server running this turn stopped',
})

export function isTerminal(frame: RunFrame) {
  return frame.event === 'done' || frame.event === 'error'
}

export function seqOf(id: string) {
  return Number.parseInt(id, 10)
}

/** A stream entry `[id, ['e', event, 'd', data]]` as a frame */
export function entryFrame([id, fields]: [string, string[]]): RunFrame {
  const values: Record<string, string> = {}
  for (let index = 0; index < fields.length; index += 2) values[fields[index]] = fields[index + 1]
  return {
    seq: seqOf(id),
    ...(values.e ? { event: values.e as RunFrame['event'] } : {}),
    data: JSON.parse(values.d ?? '{}'),
  }
}

/** A published `seq\nevent\ndata` message as a frame */
export function messageFrame(message: string): RunFrame | null {
  const first = message.indexOf('\n')
  const second = message.indexOf('\n', first + 1)
  if (first < 0 || second < 0) return null
  const event = message.slice(first + 1, second)
  return {
    seq: seqOf(message.slice(0, first)),
    ...(event ? { event: event as RunFrame['event'] } : {}),
    data: JSON.parse(message.slice(second + 1)),
  }
}
