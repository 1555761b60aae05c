import { test } from '@japa/runner'
import { exited, startChildServer } from './child_server.ts'
import { FileSystemStorage } from '../../src/collaboration/storage/file_system.ts'
import { connectClient, sleep, storedText } from './helpers.ts'

function startServer(directory: string, mode: 'log' | 'no-log') {
  return startChildServer('server.ts', [directory, mode])
}

test.group('Collaboration durability (server in a child process)', () => {
  test('a kill -9 300 ms after an edit keeps it', async ({ assert, fs, cleanup }) => {
    const directory = fs.basePath
    const { child, wsBase } = await startServer(directory, 'log')
    cleanup(() => {
      child.kill('SIGKILL')
    })
    const client = connectClient(wsBase, 'notes/crash')
    await client.synced
    client.text.insert(0, 'typed just before the crash')
    await sleep(300)
    const gone = exited(child)
    child.kill('SIGKILL')
    assert.equal(await gone, 'SIGKILL')
    client.provider.disconnect()

    assert.equal(
      await storedText(new FileSystemStorage(directory), 'notes/crash'),
      'typed just before the crash'
    )
  }).timeout(20_000)

  test('a SIGTERM during a pending debounce loses nothing', async ({ assert, fs, cleanup }) => {
    const directory = fs.basePath
    const { child, wsBase } = await startServer(directory, 'no-log')
    cleanup(() => {
      child.kill('SIGKILL')
    })
    const client = connectClient(wsBase, 'notes/term')
    await client.synced
    client.text.insert(0, 'saved by the graceful stop')
    await sleep(100)
    assert.isNull(await storedText(new FileSystemStorage(directory), 'notes/term'))
    const gone = exited(child)
    child.kill('SIGTERM')
    assert.equal(await gone, 0)
    client.provider.disconnect()

    assert.equal(
      await storedText(new FileSystemStorage(directory), 'notes/term'),
      'saved by the graceful stop'
    )
  }).timeout(20_000)
})
