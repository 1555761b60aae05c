import { useState } from 'react'
import { profileDownloadUrl, type Entry } from './api.ts'
import { duration } from './format.ts'

/** One frame of the stored flame tree (see src/console/profiling/flame_tree.ts) */
export interface FlameNode {
  name: string
  location: string
  self: number
  total: number
  children: FlameNode[]
}

/** A frame as the entry stores it: a flat list, each naming its parent's index */
interface StoredFrame {
  name: string
  location: string
  self: number
  total: number
  parent: number
}

/** The tree back from its stored list (parents come before their children) */
function treeOf(frames: StoredFrame[]): FlameNode | undefined {
  const nodes = frames.map((frame): FlameNode => ({
    name: frame.name,
    location: frame.location,
    self: frame.self,
    total: frame.total,
    children: [],
  }))
  frames.forEach((frame, index) => {
    if (frame.parent >= 0 && frame.parent < index) nodes[frame.parent].children.push(nodes[index])
  })
  return nodes[0]
}

/** Height of one row of frames, in px */
const ROW = 20
/** Frames narrower than this share of the view are not drawn (they could not be read or clicked) */
const MIN_WIDTH = 0.002

interface PlacedFrame {
  node: FlameNode
  depth: number
  /** Left edge and width, as shares of the focused frame */
  x: number
  width: number
}

function place(root: FlameNode): PlacedFrame[] {
  const placed: PlacedFrame[] = []
  const total = root.total || 1
  const stack: PlacedFrame[] = [{ node: root, depth: 0, x: 0, width: 1 }]
  while (stack.length > 0) {
    const frame = stack.pop()!
    placed.push(frame)
    let x = frame.x
    for (const child of frame.node.children) {
      const width = child.total / total
      if (width >= MIN_WIDTH) stack.push({ node: child, depth: frame.depth + 1, x, width })
      x += width
    }
  }
  return placed
}

function kindOf(node: FlameNode) {
  if (!node.location) return 'frame-v8'
  if (node.location.includes('/node_modules/')) return 'frame-lib'
  if (node.location.startsWith('node:')) return 'frame-node'
  return 'frame-app'
}

function percent(share: number) {
  return `${(share * 100).toFixed(3)}%`
}

/**
 * The flame graph of a stored CPU profile: the root at the top, callees
 * below, each frame as wide as its share of the samples. Clicking a frame
 * zooms to it; the path above leads back.
 */
export function FlameGraph(props: { tree: FlameNode }) {
  const [path, setPath] = useState<FlameNode[]>([])
  const focus = path.at(-1) ?? props.tree
  const frames = place(focus)
  const depth = Math.max(...frames.map((frame) => frame.depth)) + 1
  const all = props.tree.total || 1
  return (
    <section className="flame-graph">
      <nav className="flame-path" aria-label="Zoom">
        <button type="button" disabled={path.length === 0} onClick={() => setPath([])}>
          All samples
        </button>
        {path.map((node, index) => (
          <button key={index} type="button" onClick={() => setPath(path.slice(0, index + 1))}>
            {node.name}
          </button>
        ))}
      </nav>
      <div className="flame" role="group" aria-label="Flame graph" style={{ height: depth * ROW }}>
        {frames.map((frame, index) => (
          <div
            key={index}
            role="button"
            tabIndex={0}
            className={`frame ${kindOf(frame.node)}`}
            data-name={frame.node.name}
            title={`${frame.node.name}${frame.node.location ? ` ${frame.node.location}` : ''}\n${frame.node.total} samples (${percent(frame.node.total / all)}), ${frame.node.self} in the frame itself`}
            style={{ left: percent(frame.x), width: percent(frame.width), top: frame.depth * ROW }}
            onClick={() => frame.depth > 0 && setPath([...path, frame.node])}
            onKeyDown={(event) => {
              if (event.key === 'Enter' && frame.depth > 0) setPath([...path, frame.node])
            }}
          >
            {frame.node.name}
          </div>
        ))}
      </div>
    </section>
  )
}

function otherRequestsLabel(count: number) {
  if (count === 0) return 'No other request ran during this window: every sample is this capture’s'
  return `${count} other request${count === 1 ? '' : 's'} ran during this window; V8 samples the whole process, so their work is in these samples too`
}

/** A CPU profile entry: what was captured, the honesty label, the graph and the download */
export function CpuProfileDetail(props: { entry: Entry }) {
  const content = props.entry.content as {
    trigger?: string
    request?: { method: string; path: string } | null
    samples?: number
    samplingIntervalMicros?: number
    otherRequests?: number
    truncated?: boolean
    collapsedNodes?: number
    rawBytes?: number | null
    rawDropped?: string | null
    frames?: StoredFrame[]
  }
  const tree = Array.isArray(content.frames) ? treeOf(content.frames) : undefined
  return (
    <>
      <dl className="fields">
        <dt>Trigger</dt>
        <dd>{content.trigger}</dd>
        <dt>Request</dt>
        <dd>{content.request ? `${content.request.method} ${content.request.path}` : '—'}</dd>
        <dt>Duration</dt>
        <dd>{duration(props.entry.durationMs)}</dd>
        <dt>Samples</dt>
        <dd>
          {content.samples} every {content.samplingIntervalMicros} µs
          {content.truncated ? ' (truncated by a cap)' : ''}
        </dd>
      </dl>
      <p className={`shared-window ${content.otherRequests ? 'warn' : 'muted'}`}>
        {otherRequestsLabel(content.otherRequests ?? 0)}
      </p>
      {content.rawBytes ? (
        <p>
          <a className="download" href={profileDownloadUrl(props.entry.id)} download>
            Download .cpuprofile
          </a>{' '}
          <span className="muted">(opens in Chrome DevTools or speedscope)</span>
        </p>
      ) : (
        <p className="muted">
          Raw profile not kept{content.rawDropped ? `: ${content.rawDropped}` : ''}
        </p>
      )}
      {content.collapsedNodes ? (
        <p className="muted">{content.collapsedNodes} smaller frames are folded into “(other)”</p>
      ) : null}
      {tree && <FlameGraph tree={tree} />}
    </>
  )
}
