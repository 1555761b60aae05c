import type { ResolveUserFn } from '../types.ts'

/**
 * The default `resolveUser`: `ctx.auth.check()` then `ctx.auth.user`
 * (needs `@adonisjs/auth`); null when nobody is signed in or the app has no
 * auth, so the routes answer 401 until `routes.resolveUser` is set.
 */
export const defaultResolveUser: ResolveUserFn = async (ctx) => {
  const auth = (ctx as any).auth
  if (!auth || typeof auth.check !== 'function') {
    return null
  }
  if (!(await auth.check())) {
    return null
  }
  const user = auth.user
  if (!user) {
    return null
  }
  return {
    id: user.id,
    name: user.fullName ?? user.name ?? user.email ?? null,
    avatarUrl: user.avatarUrl ?? null,
  }
}
