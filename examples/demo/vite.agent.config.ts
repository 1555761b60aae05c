import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vite'
import react from '@vitejs/plugin-react'

/**
 * Builds the /agent page (resources/agent/page.tsx) into public/agent with
 * .vite/manifest.json, which features/agent.ts reads to write its tags.
 * Its own build beside vite.config.ts: the page shares nothing with the
 * collaboration page, and its browser test builds it without Excalidraw.
 */
export default defineConfig({
  root: fileURLToPath(new URL('./resources/agent/', import.meta.url)),
  base: '/agent-demo/assets/',
  publicDir: false,
  plugins: [react()],
  build: {
    outDir: fileURLToPath(new URL('./public/agent/', import.meta.url)),
    emptyOutDir: true,
    assetsDir: '',
    manifest: true,
    rolldownOptions: {
      input: fileURLToPath(new URL('./resources/agent/page.tsx', import.meta.url)),
    },
  },
  logLevel: 'warn',
})
