/** Arguments recorded per command; the rest are counted */
export const MAX_RECORDED_ARGUMENTS = 20
/** Characters kept of one recorded argument (a key, a field name) */
const MAX_ARGUMENT_LENGTH = 200

/** Commands whose every argument may carry a credential: only their count is kept */
const HIDDEN = new Set(['AUTH', 'HELLO', 'MIGRATE', 'CONFIG', 'ACL'])

/** Commands that read or manage keys and carry no written value: arguments kept as they are */
const KEYS_ONLY = new Set(
  (
    'GET MGET GETDEL GETEX DEL UNLINK EXISTS EXPIRE PEXPIRE EXPIREAT PEXPIREAT PERSIST TTL PTTL TYPE ' +
    'INCR INCRBY INCRBYFLOAT DECR DECRBY STRLEN HGET HMGET HGETALL HDEL HEXISTS HKEYS HVALS HLEN ' +
    'HINCRBY HINCRBYFLOAT LRANGE LLEN LPOP RPOP LINDEX LTRIM BLPOP BRPOP SMEMBERS SCARD SPOP ' +
    'SRANDMEMBER ZRANGE ZRANGEBYSCORE ZREVRANGE ZCARD ZCOUNT ZINCRBY ZREMRANGEBYSCORE ZREMRANGEBYRANK ' +
    'KEYS SCAN SSCAN HSCAN ZSCAN PING SELECT INFO DBSIZE FLUSHDB FLUSHALL SUBSCRIBE UNSUBSCRIBE ' +
    'PSUBSCRIBE PUNSUBSCRIBE MULTI EXEC DISCARD WATCH UNWATCH TIME CLIENT RENAME RENAMENX COPY ' +
    'XLEN XRANGE XREVRANGE XREAD XACK XDEL XTRIM XPENDING XCLAIM XAUTOCLAIM XGROUP XINFO EVALSHA_RO ' +
    'SCRIPT OBJECT MEMORY QUIT READONLY READWRITE'
  ).split(' ')
)

/**
 * Which argument positions of a command hold written values (replaced by
 * their length). Anything not listed here or in KEYS_ONLY keeps its first
 * argument (the key) and hides the rest.
 */
function isValue(command: string, index: number, args: readonly unknown[]): boolean {
  switch (command) {
    case 'SET':
    case 'SETNX':
    case 'GETSET':
    case 'APPEND':
    case 'PUBLISH':
    case 'SPUBLISH':
      return index === 1
    case 'SETEX':
    case 'PSETEX':
    case 'SETRANGE':
    case 'LSET':
    case 'HSETNX':
    case 'RESTORE':
      return index === 2
    case 'LINSERT':
      return index >= 2
    case 'MSET':
    case 'MSETNX':
      return index % 2 === 1
    case 'HSET':
    case 'HMSET':
      return index >= 2 && index % 2 === 0
    case 'LPUSH':
    case 'RPUSH':
    case 'LPUSHX':
    case 'RPUSHX':
    case 'SADD':
    case 'SREM':
    case 'SISMEMBER':
    case 'SMISMEMBER':
    case 'ZADD':
    case 'ZREM':
    case 'ZSCORE':
    case 'PFADD':
    case 'LREM':
      return index >= 1
    case 'XADD':
      return index >= 2
    case 'EVAL':
    case 'EVALSHA':
    case 'EVAL_RO':
    case 'FCALL': {
      // script, numkeys, keys..., then the script's arguments
      const keys = Number(String(args[1]))
      return Number.isInteger(keys) ? index >= 2 + keys : index >= 2
    }
    default:
      return !KEYS_ONLY.has(command) && index >= 1
  }
}

function text(value: unknown): string {
  if (Buffer.isBuffer(value)) return value.toString('utf8')
  return String(value)
}

function size(value: unknown): number {
  if (Buffer.isBuffer(value)) return value.length
  return Buffer.byteLength(String(value))
}

/**
 * A command's arguments as the console records them: keys and options kept
 * (bounded), every written value (the value of SET, the fields' values of
 * HSET, a PUBLISH message, a script's arguments) replaced by `[N bytes]`,
 * and credentials (AUTH, HELLO, CONFIG...) hidden whole.
 */
export function redisArguments(name: string, args: readonly unknown[]): string[] {
  const command = name.toUpperCase()
  if (HIDDEN.has(command)) return args.length ? [`[${args.length} arguments hidden]`] : []
  const recorded: string[] = []
  const count = Math.min(args.length, MAX_RECORDED_ARGUMENTS)
  for (let index = 0; index < count; index++) {
    const value = args[index]
    if (isValue(command, index, args)) {
      recorded.push(`[${size(value)} bytes]`)
      continue
    }
    const kept = text(value)
    recorded.push(
      kept.length > MAX_ARGUMENT_LENGTH ? `${kept.slice(0, MAX_ARGUMENT_LENGTH)}…` : kept
    )
  }
  if (args.length > count) recorded.push(`[${args.length - count} more arguments]`)
  return recorded
}
