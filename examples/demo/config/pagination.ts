import { defineConfig } from 'adonis-atrium/pagination'
import env from '../start/env.ts'

export default defineConfig({
  defaultPageSize: 25,
  maxPageSize: 100,
  cursorSecret: env.get('PAGINATION_CURSOR_SECRET'),
})
