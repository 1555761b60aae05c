import { Transmit } from '@adonisjs/transmit-client'
import { useEffect, useState } from 'react'
import { API_BASE, type EntrySummary, type EntryType } from './api.ts'

/** The channel the server pushes on (src/console/live_tail.ts) */
const CHANNEL = 'atrium/console/live'

/** The most pushed rows a list keeps above its loaded pages */
const MAX_LIVE_ROWS = 500

export type LiveState = 'off' | 'connecting' | 'live' | 'failed'

interface LiveTailMessage {
  entries: EntrySummary[]
  skipped: number
}

/**
 * New entries of `type` as the server pushes them, newest first, while
 * `type` is set. One event stream per followed list, closed when the list
 * stops following or unmounts.
 */
export function useLiveTail(type: EntryType | null) {
  const [rows, setRows] = useState<EntrySummary[]>([])
  const [skipped, setSkipped] = useState(0)
  const [state, setState] = useState<LiveState>('off')

  useEffect(() => {
    setRows([])
    setSkipped(0)
    if (!type) {
      setState('off')
      return
    }
    setState('connecting')
    let current = true
    const transmit = new Transmit({
      baseUrl: `${location.origin}${API_BASE}/live`,
      onSubscribeFailed: () => current && setState('failed'),
    })
    const subscription = transmit.subscription(CHANNEL)
    subscription.onMessage<LiveTailMessage>((message) => {
      const mine = message.entries.filter((entry) => entry.type === type).reverse()
      if (mine.length) setRows((previous) => [...mine, ...previous].slice(0, MAX_LIVE_ROWS))
      if (message.skipped) setSkipped((previous) => previous + message.skipped)
    })
    // resolves once the stream is open and the subscription answered, whatever it answered
    subscription.create().then(
      () => current && setState(subscription.isCreated ? 'live' : 'failed'),
      () => current && setState('failed')
    )
    return () => {
      current = false
      void subscription.delete().catch(() => {})
      transmit.close()
    }
  }, [type])

  return { rows, skipped, state }
}
