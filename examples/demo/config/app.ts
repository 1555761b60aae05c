import { defineConfig } from '@adonisjs/core/http'

export const appUrl = `http://localhost:${process.env.PORT ?? 3333}`

export const http = defineConfig({
  generateRequestId: true,
  cookie: { path: '/', maxAge: '2h', httpOnly: true, secure: false, sameSite: 'lax' },
})
