/**
 * PostgreSQL's text cannot hold U+0000: a NUL in a stored string fails the
 * whole statement (`invalid byte sequence`), and in JSON its `\u0000` escape
 * is refused the same way. Strings that come from outside (a request's query
 * string, a model's answer) are stored with U+FFFD in its place, on every
 * database alike.
 */

/** `text` with each NUL replaced by U+FFFD; the same string when it has none */
export function withoutNul(text: string) {
  return text.includes('\u0000') ? text.replaceAll('\u0000', '\ufffd') : text
}

/**
 * JSON text with each `\u0000` escape replaced by `\ufffd`. A run of
 * backslashes before `u0000` escapes it only when odd in number (`\\u0000`
 * is a backslash and the letters `u0000`).
 */
export function withoutNulEscapes(json: string) {
  if (!json.includes('\\u0000')) return json
  return json.replace(/(\\+)u0000/g, (match, slashes: string) =>
    slashes.length % 2 === 1 ? `${slashes.slice(1)}\\ufffd` : match
  )
}
