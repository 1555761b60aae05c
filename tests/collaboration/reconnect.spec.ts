import { test } from '@japa/runner'
import * as Y from 'yjs'
import { WebSocket } from 'ws'
import { WebsocketProvider } from 'y-websocket'
import type { HttpContext } from '@adonisjs/core/http'
import { connectClient, setupCollabApp, tokenFor, waitFor } from './helpers.ts'

async function setupTokenApp() {
  const app = await setupCollabApp({
    routes: {
      resolveUser: (ctx: HttpContext) => {
        const id = ctx.request.header('x-user')
        return id ? { id } : null
      },
    },
  })
  const freshToken = async (docName: string) => {
    // closing the provider when the test ends asks again, while the app closes
    const response = await fetch(
      `${app.url}/collaboration/token?doc=${encodeURIComponent(docName)}`,
      { headers: { 'x-user': 'u1' } }
    ).catch(() => null)
    if (!response) return ''
    return ((await response.json()) as { token: string }).token
  }
  return { ...app, freshToken }
}

/** A provider whose first token expires within a second, destroyed with the test */
function shortLivedClient(wsBase: string, docName: string, cleanup: (fn: () => void) => void) {
  const doc = new Y.Doc()
  const token = tokenFor(docName, 'u1', { ttl: 1 })
  const provider = new WebsocketProvider(wsBase, docName, doc, {
    WebSocketPolyfill: WebSocket as any,
    params: { token },
    disableBc: true,
    maxBackoffTime: 200,
  })
  cleanup(() => {
    provider.destroy()
    doc.destroy()
  })
  const expiresAt = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()).exp * 1000
  return { doc, provider, expiresAt }
}

test.group('Collaboration reconnection', () => {
  test('a reconnect with the token the page started with is refused once it expired', async ({
    assert,
    cleanup,
  }) => {
    const { wsBase } = await setupTokenApp()
    const { provider, expiresAt } = shortLivedClient(wsBase, 'notes/1', cleanup)
    await waitFor(() => provider.synced, 5000, 'the first sync')
    await waitFor(() => Date.now() > expiresAt + 50, 3000, 'the token to expire')
    let attempts = 0
    provider.on('connection-close', () => attempts++)
    provider.ws!.close()
    // the close itself, then two refused handshakes with the stale token
    await waitFor(() => attempts >= 3, 5000, 'two refused reconnects')
    assert.isFalse(provider.synced)
    assert.isFalse(provider.wsconnected)
  })

  test('a page that fetches a fresh token for each connection keeps editing after its token expired', async ({
    assert,
    cleanup,
  }) => {
    const { wsBase, freshToken } = await setupTokenApp()
    const { doc, provider, expiresAt } = shortLivedClient(wsBase, 'notes/2', cleanup)
    // the pattern docs/collaboration.md documents
    provider.on('connection-close', async () => {
      provider.params.token = await freshToken('notes/2')
    })
    await waitFor(() => provider.synced, 5000, 'the first sync')
    await waitFor(() => Date.now() > expiresAt + 50, 3000, 'the token to expire')

    provider.ws!.close()
    await waitFor(() => !provider.synced, 5000, 'the disconnect')
    await waitFor(() => provider.synced, 5000, 'the resync with a fresh token')
    const peer = connectClient(wsBase, 'notes/2')
    await peer.synced
    peer.text.insert(0, 'after the reconnect')
    await waitFor(() => doc.getText('content').toString() === 'after the reconnect')
    assert.equal(doc.getText('content').toString(), 'after the reconnect')
  })
})
