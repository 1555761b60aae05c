import { Presence, Repo, initializeWasm } from '@automerge/automerge-repo/slim'
import { BrowserWebSocketClientAdapter } from '@automerge/automerge-repo-network-websocket'
import { createAutomergeTransport } from 'adonis-atrium/collaboration/client'
// Automerge's slim entry leaves the WebAssembly to the app: Vite emits it as a hashed file
import wasmUrl from '@automerge/automerge/automerge.wasm?url'

/** Fetches and starts Automerge's WebAssembly; the to-do list needs it before its first render */
export function loadAutomerge() {
  return initializeWasm(wasmUrl)
}

/** Automerge documents through automerge-repo, every other engine as the default factory does */
export const createTransport = createAutomergeTransport({
  Repo,
  BrowserWebSocketClientAdapter,
  Presence,
})
