/**
 * Reads a V8 CPU profile (`--cpu-prof`) of a collaboration server and splits
 * its time by what the server was doing: each sample goes to the innermost
 * frame of its stack that names a stage (an update applied, merged, encoded,
 * written to a socket...).
 */
import { readFileSync } from 'node:fs'

interface ProfileNode {
  id: number
  callFrame: { functionName: string; url: string }
  children?: number[]
}

interface CpuProfile {
  nodes: ProfileNode[]
  samples: number[]
  timeDeltas: number[]
}

/** Module loading before the load starts: left out of the shares */
export const STARTUP = 'module loading (start-up)'

/** Stage of a frame, by function name (innermost match wins), then by file */
const STAGES: [string, (name: string, url: string) => boolean][] = [
  ['Y.mergeUpdates (batches, update log)', (name) => /^mergeUpdates/.test(name)],
  [
    'Y.applyUpdate (integrating updates)',
    (name) => /^(applyUpdate|readUpdateV2|integrateStructs|readClientsStructRefs)/.test(name),
  ],
  ['update log (RoomStorage)', (_name, url) => url.includes('room_storage')],
  [
    'encoding frames',
    (name) =>
      /^(syncUpdateFrame|writeUpdate|writeVarUint8Array|toUint8Array|awarenessFrame)$/.test(name),
  ],
  [
    'socket writes (ws send, writev)',
    (name, url) =>
      url.includes('/ws/lib/sender') ||
      name === 'writev' ||
      name === 'writevGeneric' ||
      name === 'writeGeneric' ||
      name === 'send',
  ],
  [
    'socket reads (ws receiver, message events)',
    (_name, url) => url.includes('/ws/lib/receiver') || url.includes('/ws/lib/websocket'),
  ],
  [
    'decoding messages',
    (name, url) => url.includes('lib0') && url.includes('decoding') && name !== '',
  ],
  ['garbage collection', (name) => name === '(garbage collector)'],
  [
    STARTUP,
    (name, url) => url.includes('esm/') || url.includes('ts-exec') || name.startsWith('compile'),
  ],
  ['idle', (name) => name === '(idle)'],
]

export function summarizeProfile(path: string) {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile
  const parent = new Map<number, ProfileNode>()
  const byId = new Map<number, ProfileNode>()
  for (const node of profile.nodes) {
    byId.set(node.id, node)
    for (const child of node.children ?? []) {
      parent.set(child, node)
    }
  }
  const stageOf = new Map<number, string>()
  const resolve = (node: ProfileNode): string => {
    const known = stageOf.get(node.id)
    if (known) {
      return known
    }
    let stage = 'other (timers, events, Atrium room bookkeeping)'
    for (let at: ProfileNode | undefined = node; at; at = parent.get(at.id)) {
      const match = STAGES.find(([, test]) => test(at!.callFrame.functionName, at!.callFrame.url))
      if (match) {
        stage = match[0]
        break
      }
    }
    stageOf.set(node.id, stage)
    return stage
  }
  const totals = new Map<string, number>()
  let busy = 0
  profile.samples.forEach((id, index) => {
    const stage = resolve(byId.get(id)!)
    const micros = profile.timeDeltas[index] ?? 0
    totals.set(stage, (totals.get(stage) ?? 0) + micros)
    if (stage !== 'idle' && stage !== STARTUP) {
      busy += micros
    }
  })
  return { busyMs: busy / 1000, stages: [...totals].sort((a, b) => b[1] - a[1]) }
}
