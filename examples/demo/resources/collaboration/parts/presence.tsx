import { useAwareness } from 'adonis-atrium/collaboration/react'

const COLORS = ['#e8590c', '#2f9e44', '#1971c2', '#9c36b5', '#c2255c']

/** A stable color per user name */
export function colorOf(name: string) {
  let sum = 0
  for (const char of name) sum += char.charCodeAt(0)
  return COLORS[sum % COLORS.length]
}

/** The connection status and who else is on the document */
export function Presence({
  docName,
  user,
  status,
}: {
  docName: string
  user: string
  status: string
}) {
  const { peers } = useAwareness({ docName, user: { name: user, color: colorOf(user) } })
  const names = peers.map((peer) => peer.user?.name).filter((name): name is string => !!name)
  return (
    <p className="presence">
      <code className="status">{status}</code> · You
      {[...new Set(names)].sort().map((name) => (
        <span key={name} className="peer" style={{ background: colorOf(name) }}>
          {name}
        </span>
      ))}
    </p>
  )
}
