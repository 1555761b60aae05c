import { copyFile, mkdir, readdir, stat } from 'node:fs/promises'
import { dirname, join, relative } from 'node:path'
import { stubsRoot } from '../../stubs/main.ts'
import type { CollabEngineName } from './types.ts'

export type HostedEngineName = Extract<CollabEngineName, 'partykit' | 'partyserver'>

/** The worker projects `collaboration:init` scaffolds, one per hosted engine */
const WORKER_TEMPLATES: Record<HostedEngineName, string[]> = {
  partyserver: ['hosted/partyserver', 'hosted/shared'],
  partykit: ['hosted/partykit', 'hosted/shared'],
}

/** Shared files land in the worker's src/ */
const SHARED_TARGET = 'src'

async function filesUnder(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true })
  return entries
    .filter((entry) => entry.isFile() && entry.name.endsWith('.stub'))
    .map((entry) => relative(root, join(entry.parentPath, entry.name)))
}

async function exists(path: string) {
  return stat(path).then(
    () => true,
    () => false
  )
}

/**
 * Writes the room worker project of a hosted engine into `targetDir` and
 * returns the files written and those kept because they already exist (a
 * worker the team edited is never overwritten).
 */
export async function scaffoldHostedWorker(engine: HostedEngineName, targetDir: string) {
  const written: string[] = []
  const kept: string[] = []
  for (const template of WORKER_TEMPLATES[engine]) {
    const root = join(stubsRoot, template)
    const into = template.endsWith('/shared') ? join(targetDir, SHARED_TARGET) : targetDir
    for (const file of await filesUnder(root)) {
      const target = join(into, file.replace(/\.stub$/, ''))
      if (await exists(target)) {
        kept.push(target)
        continue
      }
      await mkdir(dirname(target), { recursive: true })
      await copyFile(join(root, file), target)
      written.push(target)
    }
  }
  return { written, kept }
}
