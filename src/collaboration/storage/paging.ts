import type { ListPageOptions } from '../types.ts'

export const DEFAULT_PAGE_SIZE = 50
export const MAX_PAGE_SIZE = 200

/**
 * Offset and limit of a page: `page` 1-based (default 1), `size` clamped to 1..200 (default 50).
 */
export function pageBounds(page?: ListPageOptions): { offset: number; limit: number } | null {
  if (!page) {
    return null
  }
  const number = Math.max(1, Math.floor(Number(page.page) || 1))
  const size = Math.min(
    MAX_PAGE_SIZE,
    Math.max(1, Math.floor(Number(page.size) || DEFAULT_PAGE_SIZE))
  )
  return { offset: (number - 1) * size, limit: size }
}

/**
 * One page of an in-memory list, or the whole list without options.
 */
export function slicePage<T>(rows: T[], page?: ListPageOptions): T[] {
  const bounds = pageBounds(page)
  return bounds ? rows.slice(bounds.offset, bounds.offset + bounds.limit) : rows
}
