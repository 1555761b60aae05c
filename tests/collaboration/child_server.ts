import { spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'

/**
 * Starts a collaboration server fixture (tests/collaboration/fixtures/<name>)
 * in its own process, so a test can kill it with SIGKILL or SIGTERM; resolves
 * once it printed PORT=<n>.
 */
export async function startChildServer(fixture: string, args: string[]) {
  const path = fileURLToPath(new URL(`./fixtures/${fixture}`, import.meta.url))
  const child = spawn(process.execPath, ['--import=@poppinss/ts-exec', path, ...args], {
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

/** Resolves with the signal (or exit code) the child ends with */
export function exited(child: ChildProcess) {
  return new Promise<NodeJS.Signals | number | null>((resolve) =>
    child.once('exit', (code, signal) => resolve(signal ?? code))
  )
}
