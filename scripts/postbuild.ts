/**
 * Copies the stubs beside the compiled `stubs/main.js`, so `stubsRoot`
 * resolves inside the published package.
 */
import { cp } from 'node:fs/promises'

const root = new URL('../', import.meta.url)
await cp(new URL('stubs/', root), new URL('build/stubs/', root), {
  recursive: true,
  filter: (source) => !source.endsWith('.ts'),
})
