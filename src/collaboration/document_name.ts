import { CollabValidationError } from './errors.ts'

/**
 * Longest document name, in characters: the `name` and `document_name`
 * columns of the collaboration tables are `varchar(255)`.
 */
export const MAX_DOCUMENT_NAME_LENGTH = 255

/** NUL and the other control characters, and the Windows path separator */
function hasForbiddenCharacter(name: string) {
  for (let index = 0; index < name.length; index++) {
    const code = name.charCodeAt(index)
    if (code < 0x20 || code === 0x7f || code === 0x5c) {
      return true
    }
  }
  return false
}

/**
 * Why `name` cannot be a document name, or null when it can. Names are
 * "/"-separated segments; `.` and `..` are refused because a storage may map
 * names to paths, and nothing lets one document name reach another's folder.
 */
export function documentNameProblem(name: unknown): string | null {
  if (typeof name !== 'string' || name.length === 0) {
    return 'a document name must be a non-empty string'
  }
  if (name.length > MAX_DOCUMENT_NAME_LENGTH) {
    return `a document name is at most ${MAX_DOCUMENT_NAME_LENGTH} characters`
  }
  if (hasForbiddenCharacter(name)) {
    return 'a document name cannot contain control characters or "\\"'
  }
  for (const segment of name.split('/')) {
    if (segment === '') {
      return 'a document name cannot have an empty segment (leading, trailing or doubled "/")'
    }
    if (segment === '.' || segment === '..') {
      return 'a document name cannot have a "." or ".." segment'
    }
  }
  return null
}

/**
 * True for a name every route, token and storage accepts.
 */
export function isValidDocumentName(name: unknown): name is string {
  return documentNameProblem(name) === null
}

/**
 * Throws the 422 `E_COLLAB_VALIDATION` naming the problem when `name` is not a
 * valid document name: the one check routes, tokens and storages share.
 */
export function assertDocumentName(name: unknown): asserts name is string {
  const problem = documentNameProblem(name)
  if (problem) {
    throw new CollabValidationError(`Invalid document name: ${problem}`, {
      details: { parameter: 'docName' },
    })
  }
}
