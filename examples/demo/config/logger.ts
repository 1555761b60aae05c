import { defineConfig } from '@adonisjs/core/logger'
import env from '../start/env.ts'

export default defineConfig({
  default: 'app',
  loggers: {
    app: { enabled: true, name: 'atrium-demo', level: env.get('LOG_LEVEL') },
  },
})
