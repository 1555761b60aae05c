import { test } from '@japa/runner'
import { spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { FileSystemStorage } from '../../src/collaboration/storage/file_system.ts'
import { connectClient, sleep, storedText } from './helpers.ts'

const fixture = fileURLToPath(new URL('./fixtures/server.ts', import.meta.url))

async function startServer(directory: string, mode: 'log' | 'no-log') {
  const child = spawn(process.execPath, ['--import=@poppinss/ts-exec', fixture, directory, mode], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, NODE_ENV: 'test' },
  })
  const port = await new Promise<number>((resolve, reject) => {
    let output = ''
    child.stdout!.on('data', (chunk) => {
      output += chunk
      const match = output.match(/PORT=(\d+)/)
      if (match) {
        resolve(Number(match[1]))
      }
    })
    child.on('exit', (code) => reject(new Error(`server exited early with ${code}`)))
  })
  return { child, wsBase: `ws://127.0.0.1:${port}/collaboration` }
}

function exited(child: ChildProcess) {
  return new Promise<NodeJS.Signals | number | null>((resolve) =>
    child.once('exit', (code, signal) => resolve(signal ?? code))
  )
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
