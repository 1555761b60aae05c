import { test } from '@japa/runner'
import { fileURLToPath } from 'node:url'
import { build, type Metafile } from 'esbuild'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))

/** Bundles an entry for the browser as an app's bundler would; React stays the app's */
async function bundle(entry: string) {
  const result = await build({
    entryPoints: [entry],
    absWorkingDir: ROOT,
    bundle: true,
    format: 'esm',
    platform: 'browser',
    minify: true,
    write: false,
    metafile: true,
    external: ['react', 'react-dom'],
    logLevel: 'silent',
  })
  return { metafile: result.metafile as Metafile, code: result.outputFiles[0].text }
}

/** Every module an output pulls in, and every import left to the app */
function graph(metafile: Metafile) {
  const inputs = Object.keys(metafile.inputs)
  const external = Object.values(metafile.outputs).flatMap((output) =>
    output.imports.filter((entry) => entry.external).map((entry) => entry.path)
  )
  return { inputs, external }
}

test.group('Collaboration client bundle', () => {
  test('the client entry bundles for the browser with no server code', async ({ assert }) => {
    const { metafile, code } = await bundle('src/collaboration/client/main.ts')
    const { inputs, external } = graph(metafile)
    const ownFiles = inputs.filter((file) => file.startsWith('src/'))
    assert.isNotEmpty(ownFiles)
    assert.deepEqual(
      ownFiles.filter((file) => !file.startsWith('src/collaboration/client/')),
      []
    )
    assert.deepEqual(external, [])
    assert.notInclude(code, 'node:')
    // the Yjs stack is in; the server's socket library and Adonis are not
    assert.isTrue(inputs.some((file) => file.includes('node_modules/yjs/')))
    assert.isFalse(inputs.some((file) => /node_modules\/(ws|@adonisjs|@automerge)\//.test(file)))
  })

  test('the React entry adds only its hooks, and no editor library', async ({ assert }) => {
    const { metafile, code } = await bundle('src/collaboration/react/main.ts')
    const { inputs, external } = graph(metafile)
    assert.deepEqual(
      inputs.filter(
        (file) =>
          file.startsWith('src/') &&
          !file.startsWith('src/collaboration/client/') &&
          !file.startsWith('src/collaboration/react/')
      ),
      []
    )
    assert.sameMembers([...new Set(external)], ['react'])
    assert.notInclude(code, 'node:')
    assert.isFalse(
      inputs.some((file) => /node_modules\/(@excalidraw|tldraw|@tldraw|@automerge)\//.test(file))
    )
  })
})
