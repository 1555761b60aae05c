import { useEffect, useState } from 'react'

export type Load<T> =
  { state: 'loading' } | { state: 'error'; message: string } | { state: 'done'; value: T }

/** Runs `load` whenever `key` changes; an answer for an older key is dropped */
export function useLoad<T>(key: string, load: () => Promise<T>): Load<T> {
  const [result, setResult] = useState<Load<T>>({ state: 'loading' })
  useEffect(() => {
    let current = true
    setResult({ state: 'loading' })
    load().then(
      (value) => current && setResult({ state: 'done', value }),
      (error: Error) => current && setResult({ state: 'error', message: error.message })
    )
    return () => {
      current = false
    }
    // `key` names everything `load` reads
  }, [key])
  return result
}
