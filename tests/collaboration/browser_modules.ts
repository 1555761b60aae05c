import { readFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'

/**
 * Serves npm ESM packages to the browser without a bundler (for the page of
 * browser.spec.ts, as an app without a build step would): resolves each
 * bare specifier through its package.json "exports" (browser, then module or
 * import conditions) and builds an import map of every module reachable
 * from the entries.
 */
const root = dirname(createRequire(fileURLToPath(import.meta.url)).resolve('yjs/package.json'))
const nodeModules = dirname(root)

function pickCondition(target: any): string | null {
  if (typeof target === 'string') {
    return target
  }
  if (!target || typeof target !== 'object') {
    return null
  }
  for (const key of ['browser', 'module', 'import', 'default']) {
    if (key in target) {
      const found = pickCondition(target[key])
      if (found) {
        return found
      }
    }
  }
  return null
}

async function resolveSpecifier(specifier: string): Promise<string> {
  const parts = specifier.split('/')
  const name = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]
  const subpath = `.${specifier.slice(name.length)}`
  const pkg = JSON.parse(await readFile(join(nodeModules, name, 'package.json'), 'utf8'))
  const target = pkg.exports ? pickCondition(pkg.exports[subpath === '.' ? '.' : subpath]) : null
  const file = target ?? (subpath === '.' ? (pkg.module ?? pkg.main) : `${subpath}.js`)
  return `${name}/${file.replace(/^\.\//, '')}`
}

let cached: Promise<Record<string, string>> | undefined

/**
 * `{ specifier: url }` for the demo's import map, under `prefix`.
 */
export function importMap(entries: string[], prefix: string) {
  cached ??= (async () => {
    const map: Record<string, string> = {}
    const queue = [...entries]
    const seenFiles = new Set<string>()
    while (queue.length) {
      const specifier = queue.shift()!
      if (map[specifier]) {
        continue
      }
      const file = await resolveSpecifier(specifier)
      map[specifier] = `${prefix}${file}`
      const pending = [file]
      while (pending.length) {
        const current = pending.pop()!
        if (seenFiles.has(current)) {
          continue
        }
        seenFiles.add(current)
        const source = await readFile(join(nodeModules, current), 'utf8')
        for (const match of source.matchAll(
          /(?:import|export)[^'"]*?from\s*['"]([^'"]+)['"]|import\s*['"]([^'"]+)['"]/g
        )) {
          const next = match[1] ?? match[2]
          if (next.startsWith('.')) {
            pending.push(join(dirname(current), next))
          } else if (!map[next]) {
            queue.push(next)
          }
        }
      }
    }
    return map
  })()
  return cached
}

/**
 * Reads one file under node_modules for the asset route; null outside it or for non-JS files.
 */
export async function readModule(path: string): Promise<string | null> {
  const file = join(nodeModules, path)
  if (!file.startsWith(nodeModules) || !/\.m?js$/.test(file)) {
    return null
  }
  return readFile(file, 'utf8').catch(() => null)
}
