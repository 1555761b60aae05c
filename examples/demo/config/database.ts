import app from '@adonisjs/core/services/app'
import { defineConfig } from '@adonisjs/lucid'
import env from '../start/env.ts'

/**
 * SQLite in a file under the demo's tmp/ folder (or DEMO_SQLITE_FILE),
 * created on first start.
 */
export default defineConfig({
  connection: 'sqlite',
  connections: {
    sqlite: {
      client: 'better-sqlite3',
      connection: { filename: env.get('DEMO_SQLITE_FILE') ?? app.tmpPath('demo.sqlite3') },
      useNullAsDefault: true,
      migrations: { naturalSort: true, paths: ['database/migrations'] },
    },
  },
})
