import type { CursorPage } from './types.ts'

/**
 * The usual HTTP shape of a keyset page (Relay's `pageInfo`).
 */
export interface HttpCursorPage<T> {
  data: T[]
  pageInfo: {
    startCursor: string | null
    endCursor: string | null
    hasNextPage: boolean
    hasPreviousPage: boolean
  }
  total?: number
}

/**
 * Maps a `CursorPage` to `{ data, pageInfo }`, optionally serializing each item.
 */
export function toHttpPage<T, U = T>(
  page: CursorPage<T>,
  serialize?: (item: T) => U
): HttpCursorPage<U> {
  return {
    data: serialize ? page.items.map(serialize) : (page.items as unknown as U[]),
    pageInfo: {
      startCursor: page.startCursor,
      endCursor: page.endCursor,
      hasNextPage: page.hasNext,
      hasPreviousPage: page.hasPrev,
    },
    ...(page.total !== undefined ? { total: page.total } : {}),
  }
}
