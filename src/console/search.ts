/** Longest accepted search, in characters */
export const MAX_SEARCH_LENGTH = 200

/**
 * The words of a search: runs of letters and digits in any script,
 * lowercased, without repeats. Quotes, operators, `*` and every other
 * character only separate words, so no search syntax of any database ever
 * reaches it from a client.
 */
export function searchWords(q: string): string[] {
  return [...new Set(q.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])]
}

/** What the memory store matches: every word is a substring of the summary, ignoring case */
export function summaryMatches(summary: string, words: string[]) {
  const text = summary.toLowerCase()
  return words.every((word) => text.includes(word))
}
