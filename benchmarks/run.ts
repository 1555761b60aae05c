/**
 * `npm run bench -- <feature> [file filter]` runs every `benchmarks/<feature>/*.ts`
 * file, one child process each so one benchmark's heap and JIT state never
 * colour the next. Each file prints its own table of figures and baselines.
 */
import { readdir } from 'node:fs/promises'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const root = new URL('./', import.meta.url)
const entries = await readdir(root, { withFileTypes: true })
const features = entries
  .filter((entry) => entry.isDirectory() && entry.name !== 'lib')
  .map((entry) => entry.name)
  .sort()

const [feature, filter] = process.argv.slice(2)
if (!feature || !features.includes(feature)) {
  console.error(
    `Usage: npm run bench -- <feature> [file filter]\nFeatures with benchmarks: ${features.join(', ') || 'none'}`
  )
  process.exit(1)
}

const featureFiles = await readdir(new URL(`${feature}/`, root))
const files = featureFiles
  .filter((file) => file.endsWith('.ts') && (!filter || file.includes(filter)))
  .sort()

let failed = 0
for (const file of files) {
  const path = fileURLToPath(new URL(`${feature}/${file}`, root))
  console.log(`\n▶ ${feature}/${file}`)
  const result = spawnSync(process.execPath, ['--import=@poppinss/ts-exec', '--expose-gc', path], {
    stdio: 'inherit',
    env: process.env,
  })
  if (result.status !== 0) {
    failed++
    console.error(`✖ ${feature}/${file} exited with ${result.status ?? result.signal}`)
  }
}
process.exit(failed ? 1 : 0)
