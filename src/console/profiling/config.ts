import { fail, FILE, fraction, positiveInteger } from '../config_checks.ts'

/** `profiling` in config/console.ts: CPU profiles captured through `node:inspector` */
export interface ProfilingOptions {
  /** Master switch, false by default: while false no profiler and no inspector session exist */
  enabled?: boolean
  /** Fraction (0 to 1) of requests captured without being armed, 0 by default */
  sampleRate?: number
  /** Captures running at once (they share V8's one profiler), 1 by default */
  maxConcurrent?: number
  /** Captures shorter than this are discarded, 0 by default */
  minDurationMs?: number
  /** V8 sampling interval, 1000 µs by default */
  samplingIntervalMicros?: number
  /** A capture stops itself after this long (the request goes on), 10 s by default */
  maxDurationMs?: number
  /** Largest `windowMs` accepted by `POST /profiles/arm`, 60 s by default */
  maxWindowMs?: number
  /** Largest `count` of requests one arming covers, 100 by default */
  maxArmedRequests?: number
  /** Longest `ttlMs` of an arming, 10 minutes by default */
  maxArmTtlMs?: number
  /** Samples kept per capture (later ones are dropped, the entry says so), 20 000 by default */
  maxSamples?: number
  /** Frames kept in the stored flame tree; the rest collapse into "(other)", 500 by default */
  maxNodes?: number
  /** The raw `.cpuprofile` is kept for download up to this size, 5 MiB by default; 0 never keeps it */
  maxRawBytes?: number
}

/** `profiling` with its defaults applied */
export type ResolvedProfiling = Required<ProfilingOptions>

/** Validates `profiling` and fills in its defaults */
export function resolveProfiling(options: ProfilingOptions = {}): ResolvedProfiling {
  if (options === null || typeof options !== 'object') {
    fail(`Invalid "profiling" in ${FILE}: use { enabled, sampleRate, maxConcurrent, ... }`)
  }
  const atLeastOne = (value: unknown, key: string, fallback: number) => {
    const resolved = positiveInteger(value, `profiling.${key}`, fallback)
    if (resolved < 1) fail(`Invalid "profiling.${key}" in ${FILE}: use 1 or more`)
    return resolved
  }
  const samplingIntervalMicros = atLeastOne(
    options.samplingIntervalMicros,
    'samplingIntervalMicros',
    1000
  )
  if (samplingIntervalMicros < 10) {
    fail(`Invalid "profiling.samplingIntervalMicros" in ${FILE}: use 10 µs or more`)
  }
  return {
    enabled: options.enabled === true,
    sampleRate:
      options.sampleRate === undefined ? 0 : fraction(options.sampleRate, 'profiling.sampleRate'),
    maxConcurrent: atLeastOne(options.maxConcurrent, 'maxConcurrent', 1),
    minDurationMs: positiveInteger(options.minDurationMs, 'profiling.minDurationMs', 0),
    samplingIntervalMicros,
    maxDurationMs: atLeastOne(options.maxDurationMs, 'maxDurationMs', 10_000),
    maxWindowMs: atLeastOne(options.maxWindowMs, 'maxWindowMs', 60_000),
    maxArmedRequests: atLeastOne(options.maxArmedRequests, 'maxArmedRequests', 100),
    maxArmTtlMs: atLeastOne(options.maxArmTtlMs, 'maxArmTtlMs', 10 * 60_000),
    maxSamples: atLeastOne(options.maxSamples, 'maxSamples', 20_000),
    maxNodes: atLeastOne(options.maxNodes, 'maxNodes', 500),
    maxRawBytes: positiveInteger(options.maxRawBytes, 'profiling.maxRawBytes', 5 * 1024 * 1024),
  }
}
