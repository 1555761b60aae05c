import { useEffect, useState } from 'react'

/**
 * Routing lives in the URL's hash (`#/requests?status=5xx`, `#/entries/<id>`),
 * so the server serves one page at `{path}` and any deep link still loads it.
 */
export interface Route {
  /** Path segments after `#/`, decoded */
  segments: string[]
  params: URLSearchParams
}

export function parseHash(hash: string): Route {
  const text = hash.replace(/^#\/?/, '')
  const [path, query = ''] = text.split('?', 2)
  const segments = path.split('/').filter(Boolean).map(decodeURIComponent)
  return { segments, params: new URLSearchParams(query) }
}

/** `#/a/b?x=1` from segments and the defined, non-empty params */
export function href(segments: string[], params: Record<string, string | undefined> = {}) {
  const search = new URLSearchParams()
  for (const [key, value] of Object.entries(params)) if (value) search.set(key, value)
  const query = search.toString()
  return `#/${segments.map(encodeURIComponent).join('/')}${query ? `?${query}` : ''}`
}

export function navigate(target: string) {
  window.location.hash = target
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseHash(window.location.hash))
  useEffect(() => {
    const update = () => setRoute(parseHash(window.location.hash))
    window.addEventListener('hashchange', update)
    return () => window.removeEventListener('hashchange', update)
  }, [])
  return route
}
