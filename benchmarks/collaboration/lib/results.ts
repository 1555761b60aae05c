/**
 * Figures of interleaved repeats (A, H, Y, A, H, Y, ...): every value keeps
 * the machine's 1-minute load average from when its run started, and the
 * table prints each repeat, the median ratio and the spread of the ratios.
 */
import { loadavg } from 'node:os'
import { figure, median, printTable } from '../../lib/report.ts'
import { readVersion, type ServerKind } from './harness.ts'

interface Measure {
  value: number
  load: number
}

const results: Record<string, Partial<Record<ServerKind, Measure[]>>> = {}
const direction: Record<string, 'higher' | 'lower'> = {}
let runLoad = 0

/** Notes the load average as a run starts; its figures carry it */
export function startRun() {
  runLoad = loadavg()[0]
  return runLoad
}

export function record(name: string, kind: ServerKind, value: number, better: 'higher' | 'lower') {
  results[name] ??= {}
  ;(results[name][kind] ??= []).push({ value, load: runLoad })
  direction[name] = better
}

export const VERSIONS: Record<ServerKind, string> = {
  'atrium': `adonis-atrium (this checkout), yjs ${readVersion('yjs')}`,
  'y-websocket': `@y/websocket-server ${readVersion('@y/websocket-server')}`,
  'hocuspocus': `@hocuspocus/server ${readVersion('@hocuspocus/server')} (client: @hocuspocus/provider ${readVersion('@hocuspocus/provider')} wire)`,
}

function cell(measures: Measure[] = []) {
  if (!measures.length) {
    return 'n/a'
  }
  return (
    measures.map((measure) => figure(measure.value)).join(' / ') +
    ` (load ${measures.map((measure) => measure.load.toFixed(1)).join(' / ')})`
  )
}

/** Median of the per-repeat ratios, and their range */
function ratio(values: Measure[] = [], anchors: Measure[] = []) {
  const ratios: number[] = []
  for (let index = 0; index < Math.min(values.length, anchors.length); index++) {
    const anchor = anchors[index].value
    const value = values[index].value
    if (anchor > 0 && Number.isFinite(value)) {
      ratios.push(value / anchor)
    } else if (anchor === 0 && value === 0) {
      ratios.push(1)
    }
  }
  if (!ratios.length) {
    return 'n/a'
  }
  const low = Math.min(...ratios).toFixed(2)
  const high = Math.max(...ratios).toFixed(2)
  return `${median(ratios).toFixed(2)}x (${low}-${high})`
}

export function printResults() {
  console.log('\nServers:')
  for (const [kind, version] of Object.entries(VERSIONS)) {
    console.log(`  ${kind.padEnd(12)} ${version}`)
  }
  printTable(
    'Collaboration server: Atrium vs @y/websocket-server vs @hocuspocus/server (loopback, each repeat with the 1-min load average at its start; ratios: median of the repeats, range)',
    Object.entries(results).map(([name, values]) => ({
      'figure': name,
      'better': direction[name],
      'atrium': cell(values.atrium),
      [`y-websocket ${readVersion('@y/websocket-server')}`]: cell(values['y-websocket']),
      [`hocuspocus ${readVersion('@hocuspocus/server')}`]: cell(values.hocuspocus),
      'atrium / y-ws': ratio(values.atrium, values['y-websocket']),
      'atrium / hocus': ratio(values.atrium, values.hocuspocus),
    }))
  )
}
