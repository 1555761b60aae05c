/**
 * Bundles the console dashboard (src/console/ui, React included) into hashed,
 * minified files plus `manifest.json` naming them. `npm run build` writes them
 * to build/console-ui; a console running from the TypeScript sources bundles
 * in memory with the same options instead (see src/console/http/ui_assets.ts).
 */
import { mkdir, rm, writeFile } from 'node:fs/promises'
import { basename } from 'node:path'
import { fileURLToPath } from 'node:url'

const ENTRY = fileURLToPath(new URL('../src/console/ui/main.tsx', import.meta.url))
const OUT_DIR = new URL('../build/console-ui/', import.meta.url)

/** What build/console-ui/manifest.json holds: the hashed names the shell links */
export interface ConsoleUiManifest {
  script: string
  style: string | null
}

export interface ConsoleUiBundle {
  manifest: ConsoleUiManifest
  files: { name: string; contents: Uint8Array }[]
}

export async function bundleConsoleUi(): Promise<ConsoleUiBundle> {
  const { build } = await import('esbuild')
  const result = await build({
    entryPoints: { console: ENTRY },
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: ['es2022'],
    jsx: 'automatic',
    minify: true,
    write: false,
    outdir: fileURLToPath(OUT_DIR),
    entryNames: '[name]-[hash]',
    assetNames: '[name]-[hash]',
    legalComments: 'none',
    define: { 'process.env.NODE_ENV': '"production"' },
    logLevel: 'silent',
  })
  const files = result.outputFiles.map((file) => ({
    name: basename(file.path),
    contents: file.contents,
  }))
  const script = files.find((file) => file.name.endsWith('.js'))
  if (!script) throw new Error('The console UI bundle produced no script')
  const style = files.find((file) => file.name.endsWith('.css'))
  return { manifest: { script: script.name, style: style?.name ?? null }, files }
}

/** Writes the bundle and its manifest to build/console-ui (replacing what was there) */
export async function writeConsoleUi() {
  const bundle = await bundleConsoleUi()
  await rm(OUT_DIR, { recursive: true, force: true })
  await mkdir(OUT_DIR, { recursive: true })
  for (const file of bundle.files) await writeFile(new URL(file.name, OUT_DIR), file.contents)
  await writeFile(new URL('manifest.json', OUT_DIR), `${JSON.stringify(bundle.manifest)}\n`)
  return bundle
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const bundle = await writeConsoleUi()
  for (const file of bundle.files)
    console.log(`build/console-ui/${file.name} ${file.contents.byteLength} B`)
}
