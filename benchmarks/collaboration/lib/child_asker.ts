import type { ChildProcess } from 'node:child_process'

/**
 * Asks a benchmark child process over IPC: `{ cmd, id, ...extra }` out, the
 * reply carrying the same `id` back.
 */
export function childAsker(child: ChildProcess) {
  let nextId = 0
  return (cmd: string, extra: Record<string, unknown> = {}) => {
    const id = ++nextId
    return new Promise<any>((resolve) => {
      const listener = (message: any) => {
        if (message?.id === id) {
          child.off('message', listener)
          resolve(message)
        }
      }
      child.on('message', listener)
      child.send({ cmd, id, ...extra })
    })
  }
}
