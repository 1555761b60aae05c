import { readFile } from 'node:fs/promises'
import { extname } from 'node:path'
import { ConsoleUiMissingException } from '../errors.ts'

/** The hashed names the shell links, as build/console-ui/manifest.json holds them */
export interface ConsoleUiManifest {
  script: string
  style: string | null
}

export interface ConsoleUiAsset {
  body: Buffer
  contentType: string
}

/** The dashboard's files, in memory: only names listed here are ever served */
export interface ConsoleUiAssets {
  manifest: ConsoleUiManifest
  files: Map<string, ConsoleUiAsset>
}

const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
}
const HASHED_NAME = /^[A-Za-z0-9_-]+\.(js|css)$/

/** build/src/console/http/ -> build/console-ui/ in the published package */
const BUILT_DIR = new URL('../../../console-ui/', import.meta.url)
/** Running from the TypeScript sources (tests, dev): no build output to trust */
const FROM_SOURCE = import.meta.url.endsWith('.ts')

function asset(name: string, body: Buffer | Uint8Array): [string, ConsoleUiAsset] {
  return [name, { body: Buffer.from(body), contentType: CONTENT_TYPES[extname(name)] }]
}

/** Reads the manifest and the files it names from build/console-ui */
async function readBuilt(): Promise<ConsoleUiAssets> {
  let manifest: ConsoleUiManifest
  try {
    manifest = JSON.parse(await readFile(new URL('manifest.json', BUILT_DIR), 'utf8'))
  } catch {
    throw new ConsoleUiMissingException(
      'The console UI assets are missing (build/console-ui/manifest.json); run `npm run build` in the package'
    )
  }
  const names = [manifest.script, ...(manifest.style ? [manifest.style] : [])]
  if (!names.every((name) => typeof name === 'string' && HASHED_NAME.test(name))) {
    throw new ConsoleUiMissingException('build/console-ui/manifest.json names an unexpected file')
  }
  const files = await Promise.all(
    names.map(async (name) => asset(name, await readFile(new URL(name, BUILT_DIR))))
  )
  return { manifest, files: new Map(files) }
}

/**
 * From the sources the bundle is built in memory, once per process, by the
 * same script `npm run build` runs, so tests never depend on a prior build
 * and never serve a stale one. The specifier is computed so the compiler
 * leaves the script (and esbuild) out of the published build.
 */
async function bundleFromSource(): Promise<ConsoleUiAssets> {
  const script = new URL('../../../scripts/build_console_ui.ts', import.meta.url).href
  let bundle: { manifest: ConsoleUiManifest; files: { name: string; contents: Uint8Array }[] }
  try {
    const { bundleConsoleUi } = await import(script)
    bundle = await bundleConsoleUi()
  } catch (error) {
    throw new ConsoleUiMissingException(
      `The console UI could not be bundled from its sources (esbuild is a devDependency): ${(error as Error).message}`,
      { cause: error }
    )
  }
  return {
    manifest: bundle.manifest,
    files: new Map(bundle.files.map((file) => asset(file.name, file.contents))),
  }
}

let loading: Promise<ConsoleUiAssets> | undefined

/** The dashboard's assets, loaded at the first request that needs them; a failure is retried */
export function consoleUiAssets(): Promise<ConsoleUiAssets> {
  if (!loading) {
    loading = FROM_SOURCE ? bundleFromSource() : readBuilt()
    loading.catch(() => (loading = undefined))
  }
  return loading
}
