import { AgentInvalidRequestException, AgentPayloadTooLargeException } from '../errors.ts'
import { normalizeContentType, type ResolvedAttachments } from './config.ts'

/** One entry of the chat body's `attachments`, once validated */
export type AttachmentInput =
  | { kind: 'upload'; id: string; field: string }
  | { kind: 'inline'; name: string; contentType: string; data: Uint8Array; field: string }

/** Ids of `POST /agent/attachments` and of custom stagings: no path, no markup */
const ATTACHMENT_ID = /^[A-Za-z0-9_-]{1,128}$/
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/
const DATA_URL = /^data:([^;,]+)(?:;[^,]*)?;base64,/

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** A display name: no path, no control characters, at most 255 characters */
export function cleanName(value: string) {
  const base = value.split(/[/\\]/).at(-1) ?? ''
  const printable = [...base].filter((character) => {
    const code = character.codePointAt(0)!
    return code > 0x1f && code !== 0x7f
  })
  return printable.join('').trim().slice(0, 255)
}

/** 400 naming the type when it is not in `allowedContentTypes` */
export function assertAllowedType(contentType: string, allowed: string[], field: string) {
  if (!allowed.includes(contentType)) {
    throw new AgentInvalidRequestException(
      `Attachments of type "${contentType.slice(0, 100)}" are not accepted: use one of ${allowed.join(', ')}`,
      field
    )
  }
}

/** 413 naming the field when the attachment is over `maxBytes` */
export function assertSize(size: number, maxBytes: number, field: string) {
  if (size > maxBytes) {
    throw new AgentPayloadTooLargeException(
      `The attachment is larger than ${maxBytes} bytes (attachments.maxBytes)`,
      field
    )
  }
}

function inline(entry: Record<string, unknown>, field: string, limits: ResolvedAttachments) {
  let data = entry.data
  if (typeof data !== 'string' || !data) {
    throw new AgentInvalidRequestException(
      '"data" must be the file\'s bytes in base64',
      `${field}.data`
    )
  }
  let declared = entry.contentType
  const dataUrl = DATA_URL.exec(data)
  if (dataUrl) {
    declared ??= dataUrl[1]
    data = data.slice(dataUrl[0].length)
  }
  if (typeof declared !== 'string' || !declared) {
    throw new AgentInvalidRequestException(
      '"contentType" must name the file\'s type, such as "image/png"',
      `${field}.contentType`
    )
  }
  const contentType = normalizeContentType(declared)
  assertAllowedType(contentType, limits.allowedContentTypes, `${field}.contentType`)
  const text = data as string
  // The decoded size is known before decoding: a huge body is refused unread
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0
  assertSize(Math.floor((text.length * 3) / 4) - padding, limits.maxBytes, `${field}.data`)
  if (text.length % 4 !== 0 || !BASE64.test(text)) {
    throw new AgentInvalidRequestException('"data" is not valid base64', `${field}.data`)
  }
  if (entry.name !== undefined && typeof entry.name !== 'string') {
    throw new AgentInvalidRequestException('"name" must be a string', `${field}.name`)
  }
  const name = cleanName((entry.name as string | undefined) ?? '') || 'attachment'
  return { kind: 'inline' as const, name, contentType, data: Buffer.from(text, 'base64'), field }
}

/**
 * The chat body's `attachments`: uploaded ones by `{ id }`, others inline
 * as `{ data, contentType, name? }` (base64, or a `data:` URL). URLs are
 * refused: fetching a client's URL from the server is a request forgery.
 */
export function parseAttachments(
  value: unknown,
  limits: ResolvedAttachments,
  regenerate: boolean
): AttachmentInput[] | undefined {
  if (value === undefined || value === null) return undefined
  if (!Array.isArray(value)) {
    throw new AgentInvalidRequestException('"attachments" must be an array', 'attachments')
  }
  if (!value.length) return undefined
  if (!limits.staging) {
    throw new AgentInvalidRequestException(
      '"attachments" needs "attachments.staging" in config/agent.ts, which keeps their bytes',
      'attachments'
    )
  }
  if (regenerate) {
    throw new AgentInvalidRequestException(
      'A regenerate answers the stored question with its own attachments: leave "attachments" out',
      'attachments'
    )
  }
  if (value.length > limits.maxPerMessage) {
    throw new AgentInvalidRequestException(
      `A message carries at most ${limits.maxPerMessage} attachments (attachments.maxPerMessage)`,
      'attachments'
    )
  }
  return value.map((entry, index) => {
    const field = `attachments[${index}]`
    if (!isObject(entry)) {
      throw new AgentInvalidRequestException(
        'An attachment must be { id } or { data, contentType, name? }',
        field
      )
    }
    if (entry.url !== undefined) {
      throw new AgentInvalidRequestException(
        'Attachments by URL are not accepted: upload the file, or send its bytes as "data"',
        `${field}.url`
      )
    }
    if (entry.id !== undefined) {
      if (typeof entry.id !== 'string' || !ATTACHMENT_ID.test(entry.id)) {
        throw new AgentInvalidRequestException('"id" must be an attachment id', `${field}.id`)
      }
      return { kind: 'upload' as const, id: entry.id, field }
    }
    return inline(entry, field, limits)
  })
}
