import { useCallback, useEffect, useRef, useState } from 'react'

/**
 * A list fetched from the REST routes: loads on mount and when `key`
 * changes, refreshes after each write, keeps the last error.
 */
export function useRemoteList<T>(key: string, load: () => Promise<T[]>) {
  const [items, setItems] = useState<T[]>([])
  const [loading, setLoading] = useState(true)
  const [error, setError] = useState<Error | null>(null)
  const latest = useRef(0)
  const loader = useRef(load)
  loader.current = load

  const refresh = useCallback(async () => {
    const call = ++latest.current
    setLoading(true)
    try {
      const next = await loader.current()
      // an answer to an older request must not overwrite a newer one
      if (call === latest.current) {
        setItems(next)
        setError(null)
      }
    } catch (failure) {
      if (call === latest.current) setError(failure as Error)
    } finally {
      if (call === latest.current) setLoading(false)
    }
  }, [])

  useEffect(() => {
    refresh()
  }, [key, refresh])

  /** Runs a write, refreshes the list, and rethrows a failure after recording it */
  const mutate = useCallback(
    async <R>(write: () => Promise<R>): Promise<R> => {
      try {
        const result = await write()
        await refresh()
        return result
      } catch (failure) {
        setError(failure as Error)
        throw failure
      }
    },
    [refresh]
  )

  return { items, loading, error, refresh, mutate }
}
