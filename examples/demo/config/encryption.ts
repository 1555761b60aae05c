import { defineConfig, drivers } from '@adonisjs/core/encryption'
import env from '../start/env.ts'

export default defineConfig({
  default: 'gcm',
  list: {
    gcm: drivers.aes256gcm({ id: 'gcm', keys: [env.get('APP_KEY').release()] }),
  },
})
