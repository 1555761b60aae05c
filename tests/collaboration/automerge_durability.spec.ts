import { test } from '@japa/runner'
import { exited, startChildServer } from './child_server.ts'
import { FileSystemStorage } from '../../src/collaboration/storage/file_system.ts'
import { sleep, tokenFor, waitFor } from './helpers.ts'
import { contentOf, openDoc, stopRetrying, storedDoc } from './automerge_helpers.ts'

function startServer(directory: string, mode: 'log' | 'no-log') {
  return startChildServer('automerge_server.ts', [directory, mode])
}

test.group('Automerge durability (server in a child process)', () => {
  test('a kill -9 250 ms after the server has a change keeps it', async ({
    assert,
    fs,
    cleanup,
  }) => {
    const directory = fs.basePath
    const { child, wsBase } = await startServer(directory, 'log')
    cleanup(() => {
      child.kill('SIGKILL')
    })
    const client = await openDoc(wsBase, 'notes/crash')
    const witness = await openDoc(wsBase, 'notes/crash', tokenFor('notes/crash', 'u2'))
    client.handle.change((doc: any) => {
      doc.content = 'typed just before the crash'
    })
    // the automerge-repo client batches its changes for up to 100 ms before
    // sending: the clock starts when the server has the change (the witness
    // got it through the server)
    await waitFor(() => contentOf(witness.handle).content === 'typed just before the crash')
    await sleep(250)
    stopRetrying(client)
    stopRetrying(witness)
    const gone = exited(child)
    child.kill('SIGKILL')
    assert.equal(await gone, 'SIGKILL')
    await Promise.all([client.close(), witness.close()])

    const stored = await storedDoc(new FileSystemStorage(directory), 'notes/crash')
    assert.equal(stored?.content, 'typed just before the crash')
  }).timeout(60_000)

  test('a SIGTERM during a pending debounce loses nothing', async ({ assert, fs, cleanup }) => {
    const directory = fs.basePath
    const { child, wsBase } = await startServer(directory, 'no-log')
    cleanup(() => {
      child.kill('SIGKILL')
    })
    const writer = await openDoc(wsBase, 'notes/term')
    const witness = await openDoc(wsBase, 'notes/term', tokenFor('notes/term', 'u2'))
    writer.handle.change((doc: any) => {
      doc.content = 'saved by the graceful stop'
    })
    // the witness got it through the server: the server holds the change
    await waitFor(() => contentOf(witness.handle).content === 'saved by the graceful stop')
    const before = await storedDoc(new FileSystemStorage(directory), 'notes/term')
    assert.isUndefined(before?.content)

    stopRetrying(writer)
    stopRetrying(witness)
    const gone = exited(child)
    child.kill('SIGTERM')
    assert.equal(await gone, 0)
    await Promise.all([writer.close(), witness.close()])

    const stored = await storedDoc(new FileSystemStorage(directory), 'notes/term')
    assert.equal(stored?.content, 'saved by the graceful stop')
  }).timeout(60_000)
})
