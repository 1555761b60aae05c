import { readdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vite'
import react from '@vitejs/plugin-react'

/**
 * Builds the collaboration page (resources/collaboration/*.tsx, each an entry)
 * into public/collaboration: hashed files plus .vite/manifest.json, which the
 * Adonis page reads to write its <script> and <link> tags. `npm run build:demo`
 * runs it; the page's routes serve the files under /collaboration-demo/assets/.
 */
const resources = fileURLToPath(new URL('./resources/collaboration/', import.meta.url))
const packageBuild = (part: string) =>
  fileURLToPath(new URL(`../../build/src/collaboration/${part}/main.js`, import.meta.url))

export default defineConfig({
  root: resources,
  base: '/collaboration-demo/assets/',
  publicDir: false,
  plugins: [react()],
  resolve: {
    // the demo uses the package's build, as an app that installed it would
    alias: {
      'adonis-atrium/collaboration/client': packageBuild('client'),
      'adonis-atrium/collaboration/react': packageBuild('react'),
    },
  },
  build: {
    outDir: fileURLToPath(new URL('./public/collaboration/', import.meta.url)),
    emptyOutDir: true,
    assetsDir: '',
    manifest: true,
    // Excalidraw alone is a few MB; the warning would only repeat that
    chunkSizeWarningLimit: 4096,
    rolldownOptions: {
      input: readdirSync(resources)
        .filter((name) => name.endsWith('.tsx'))
        .map((name) => `${resources}${name}`),
    },
  },
  logLevel: 'warn',
})
