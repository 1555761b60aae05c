/** A V8 call frame as the inspector's `Profiler` domain reports it */
export interface CallFrame {
  functionName: string
  scriptId: string
  url: string
  lineNumber: number
  columnNumber: number
}

/** One node of a V8 `.cpuprofile` */
export interface ProfileNode {
  id: number
  callFrame: CallFrame
  hitCount?: number
  children?: number[]
}

/** A V8 `.cpuprofile`: times in microseconds of the monotonic clock (`process.hrtime`) */
export interface CpuProfile {
  nodes: ProfileNode[]
  startTime: number
  endTime: number
  samples?: number[]
  timeDeltas?: number[]
}

/** One frame of the stored flame tree: sample counts, not times */
export interface FlameNode {
  name: string
  /** `url:line` (1-based), empty for V8's own frames such as `(idle)` */
  location: string
  /** Samples taken in this frame itself */
  self: number
  /** Samples taken in this frame and below */
  total: number
  children: FlameNode[]
}

/** What a capture kept of its samples */
export interface ProfileSlice {
  profile: CpuProfile
  samples: number
  /** Samples past `maxSamples` were left out */
  truncated: boolean
}

function frameKey(frame: CallFrame) {
  return `${frame.functionName}\u0000${frame.url}\u0000${frame.lineNumber}\u0000${frame.columnNumber}`
}

/**
 * One valid `.cpuprofile` holding the samples of `parts` taken between
 * `fromUs` and `toUs`. A capture that overlapped others spans several V8
 * runs (the profiler is stopped and restarted whenever one of them ends), so
 * nodes are merged by their call path; only nodes that were sampled are kept.
 */
export function sliceProfiles(
  parts: CpuProfile[],
  fromUs: number,
  toUs: number,
  maxSamples: number
): ProfileSlice {
  const root: ProfileNode = {
    id: 1,
    callFrame: { functionName: '(root)', scriptId: '0', url: '', lineNumber: -1, columnNumber: -1 },
    hitCount: 0,
    children: [],
  }
  const nodes: ProfileNode[] = [root]
  const byPath = new Map<string, ProfileNode>()
  const samples: number[] = []
  const times: number[] = []
  let truncated = false

  for (const part of parts) {
    const byId = new Map<number, ProfileNode>()
    const parentOf = new Map<number, number>()
    for (const node of part.nodes) {
      byId.set(node.id, node)
      for (const child of node.children ?? []) parentOf.set(child, node.id)
    }
    const merged = new Map<number, ProfileNode>()
    const mergedNode = (id: number): ProfileNode => {
      const known = merged.get(id)
      if (known) return known
      const parentId = parentOf.get(id)
      // V8's root has no parent: it is the merged root
      if (parentId === undefined) {
        merged.set(id, root)
        return root
      }
      const parent = mergedNode(parentId)
      const frame = byId.get(id)!.callFrame
      const path = `${parent.id}\u0001${frameKey(frame)}`
      let node = byPath.get(path)
      if (!node) {
        node = { id: nodes.length + 1, callFrame: { ...frame }, hitCount: 0, children: [] }
        nodes.push(node)
        byPath.set(path, node)
        parent.children!.push(node.id)
      }
      merged.set(id, node)
      return node
    }
    const partSamples = part.samples ?? []
    const deltas = part.timeDeltas ?? []
    let time = part.startTime
    for (const [index, sampled] of partSamples.entries()) {
      time += deltas[index] ?? 0
      if (time < fromUs || time > toUs || !byId.has(sampled)) continue
      if (samples.length >= maxSamples) {
        truncated = true
        break
      }
      const node = mergedNode(sampled)
      node.hitCount!++
      samples.push(node.id)
      times.push(time)
    }
  }

  const startTime = Math.max(fromUs, parts[0]?.startTime ?? fromUs)
  const timeDeltas = times.map((time, index) => time - (index === 0 ? startTime : times[index - 1]))
  const last = parts.at(-1)
  return {
    profile: {
      nodes,
      startTime,
      endTime: Math.max(startTime, Math.min(toUs, last?.endTime ?? toUs)),
      samples,
      timeDeltas,
    },
    samples: samples.length,
    truncated,
  }
}

function flameNodeOf(node: ProfileNode): FlameNode {
  const { functionName, url, lineNumber } = node.callFrame
  const name = functionName || (url ? '(anonymous)' : '(unknown)')
  return {
    name,
    location: url ? `${url}:${lineNumber + 1}` : '',
    self: node.hitCount ?? 0,
    total: 0,
    children: [],
  }
}

/**
 * The flame tree of a profile, bounded to `maxNodes` frames: the frames with
 * the most samples are kept (a parent always before its children), and the
 * children left out under one parent are folded into one "(other)" frame
 * holding their samples, so every total still adds up.
 */
export function buildFlameTree(
  profile: CpuProfile,
  maxNodes: number
): { tree: FlameNode; nodes: number; collapsed: number } {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const childIds = new Set(profile.nodes.flatMap((node) => node.children ?? []))
  const rootNode = profile.nodes.find((node) => !childIds.has(node.id)) ?? profile.nodes[0]
  const hits = new Map<number, number>()
  for (const id of profile.samples ?? []) hits.set(id, (hits.get(id) ?? 0) + 1)

  // totals bottom-up, depth-first without recursion (deep stacks must not overflow ours)
  const totals = new Map<number, number>()
  const depths = new Map<number, number>([[rootNode.id, 0]])
  const order: number[] = []
  const stack = [rootNode.id]
  while (stack.length > 0) {
    const id = stack.pop()!
    order.push(id)
    for (const child of byId.get(id)?.children ?? []) {
      if (depths.has(child)) continue
      depths.set(child, depths.get(id)! + 1)
      stack.push(child)
    }
  }
  for (let index = order.length - 1; index >= 0; index--) {
    const id = order[index]
    let total = hits.get(id) ?? 0
    for (const child of byId.get(id)?.children ?? []) total += totals.get(child) ?? 0
    totals.set(id, total)
  }

  const kept = new Set(
    order
      .filter((id) => id === rootNode.id || totals.get(id)! > 0)
      .sort((a, b) => totals.get(b)! - totals.get(a)! || depths.get(a)! - depths.get(b)!)
      .slice(0, Math.max(1, maxNodes))
  )
  kept.add(rootNode.id)

  const build = (id: number): FlameNode => {
    const node = byId.get(id)!
    const flame = flameNodeOf({ ...node, hitCount: hits.get(id) ?? 0 })
    flame.total = totals.get(id)!
    let folded = 0
    for (const child of node.children ?? []) {
      if (kept.has(child)) flame.children.push(build(child))
      else folded += totals.get(child) ?? 0
    }
    if (folded > 0) {
      flame.children.push({
        name: '(other)',
        location: '',
        self: folded,
        total: folded,
        children: [],
      })
    }
    flame.children.sort((a, b) => b.total - a.total)
    return flame
  }
  // recursion is safe here: its depth is bounded by maxNodes
  const tree = build(rootNode.id)
  const sampled = order.filter((id) => totals.get(id)! > 0).length
  return { tree, nodes: kept.size, collapsed: Math.max(0, sampled - kept.size) }
}

/**
 * One frame of the tree as stored: a flat list in depth-first order, each
 * naming its parent's index (-1 for the root). Flat because MariaDB's JSON
 * functions refuse documents nested deeper than 32 levels, and call stacks are deeper.
 */
export interface StoredFrame {
  name: string
  location: string
  self: number
  total: number
  parent: number
}

/** The stored form of a flame tree, parents before their children */
export function flattenFlameTree(tree: FlameNode): StoredFrame[] {
  const frames: StoredFrame[] = []
  const stack: Array<{ node: FlameNode; parent: number }> = [{ node: tree, parent: -1 }]
  while (stack.length > 0) {
    const { node, parent } = stack.pop()!
    const index = frames.length
    frames.push({
      name: node.name,
      location: node.location,
      self: node.self,
      total: node.total,
      parent,
    })
    // reversed onto the stack so the heaviest child comes out first
    for (const child of node.children.toReversed()) stack.push({ node: child, parent: index })
  }
  return frames
}
