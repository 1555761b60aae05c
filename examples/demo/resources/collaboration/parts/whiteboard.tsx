import { useEffect, useState } from 'react'
import { CaptureUpdateAction, Excalidraw, reconcileElements } from '@excalidraw/excalidraw'
import type { ExcalidrawImperativeAPI } from '@excalidraw/excalidraw/types'
import '@excalidraw/excalidraw/index.css'
import {
  createExcalidrawAdapter,
  useCollabEditor,
  type ExcalidrawElementLike,
} from 'adonis-atrium/collaboration/react'
import { Comments } from './comments.tsx'
import { Presence } from './presence.tsx'
import { Versions } from './versions.tsx'

const canvasAdapter = createExcalidrawAdapter()

// Excalidraw's fonts are served by the demo (features/collaboration.ts), not fetched from a CDN
;(window as { EXCALIDRAW_ASSET_PATH?: string }).EXCALIDRAW_ASSET_PATH =
  '/collaboration-demo/excalidraw/'

type SceneElements = Parameters<typeof reconcileElements>[1]

/**
 * A shared Excalidraw canvas on Yjs: each shape is one entry of the
 * document's `canvas` map, merged by Excalidraw's version rule, so two
 * people drawing different shapes never overwrite each other.
 */
export function Whiteboard({ docName, user }: { docName: string; user: string }) {
  const { state, update, synced, status } = useCollabEditor({
    docName,
    editorId: 'canvas',
    adapter: canvasAdapter,
  })
  const [api, setApi] = useState<ExcalidrawImperativeAPI | null>(null)

  // shapes from the document that are newer than the canvas's go into the scene
  useEffect(() => {
    if (!api) return
    const scene = api.getSceneElementsIncludingDeleted()
    const versions = new Map(scene.map((element) => [element.id, element.version]))
    if (state.every((element) => (versions.get(element.id) ?? -1) >= (element.version ?? 0))) {
      return
    }
    api.updateScene({
      elements: reconcileElements(scene, state as unknown as SceneElements, api.getAppState()),
      captureUpdate: CaptureUpdateAction.NEVER,
    })
  }, [api, state])

  const shapes = state.filter((element) => !element.isDeleted).length
  const selectedShape = () => Object.keys(api?.getAppState().selectedElementIds ?? {})[0]

  return (
    <section className="part" id="canvas">
      <h2>Canvas · Excalidraw on Yjs</h2>
      <Presence docName={docName} user={user} status={synced ? 'synced' : status} />
      <p className="muted">
        <span className="shape-count">
          {shapes} {shapes === 1 ? 'shape' : 'shapes'}
        </span>
      </p>
      <div className="whiteboard">
        <Excalidraw
          excalidrawAPI={setApi}
          onChange={(elements) => update(elements as unknown as ExcalidrawElementLike[])}
        />
      </div>
      <div className="columns">
        <Comments
          docName={docName}
          anchor={() => ({
            kind: 'canvas-object',
            shapeId: selectedShape() ?? 'canvas',
            relativeX: 0.5,
            relativeY: 0.5,
          })}
          describe={(comment) =>
            comment.anchor.kind === 'canvas-object' && comment.anchor.shapeId !== 'canvas'
              ? `shape ${comment.anchor.shapeId.slice(0, 6)}`
              : 'the canvas'
          }
        />
        <Versions docName={docName} />
      </div>
    </section>
  )
}
