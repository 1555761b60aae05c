import type { ApplicationService } from '@adonisjs/core/types'
import { CONFIG_FILE, positiveInteger } from '../config_checks.ts'
import { AgentConfigException } from '../errors.ts'
import type { AttachmentStaging, AttachmentStagingFactory } from './staging.ts'

export const DEFAULT_MAX_ATTACHMENT_BYTES = 20 * 1024 * 1024
export const DEFAULT_MAX_ATTACHMENTS_PER_MESSAGE = 10
/** How long `agent:prune` keeps an attachment no message references (24 hours) */
export const DEFAULT_UNREFERENCED_TTL_MS = 24 * 3_600_000
export const DEFAULT_ALLOWED_CONTENT_TYPES = [
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'application/pdf',
  'text/plain',
  'text/csv',
]

/** `attachments` of config/agent.ts as the app writes it */
export interface AgentAttachmentsConfig {
  /** Largest attachment, in bytes (20 MiB) */
  maxBytes?: number
  /** Content types accepted (images, PDF, plain text and CSV) */
  allowedContentTypes?: string[]
  /** Attachments one chat message may carry (10) */
  maxPerMessage?: number
  /** Mounts `POST /<path>/attachments`; needs `staging` */
  upload?: boolean
  /** Where the bytes are kept: `stagings.fs()` or your own `AttachmentStaging` */
  staging?: AttachmentStagingFactory
  /**
   * Age in ms after which `node ace agent:prune` deletes an attachment no
   * message of a live thread references (24 hours)
   */
  unreferencedTtlMs?: number
}

/** The attachment limits once validated; `staging` is made at boot */
export interface ResolvedAttachments {
  maxBytes: number
  allowedContentTypes: string[]
  maxPerMessage: number
  upload: boolean
  staging: AttachmentStaging | null
  unreferencedTtlMs: number
}

/** `text/plain; charset=utf-8` and `Text/Plain` are `text/plain` */
export function normalizeContentType(value: string) {
  return value.split(';')[0].trim().toLowerCase()
}

/**
 * Validates `attachments` when the config file loads and returns the maker
 * of the resolved options, which builds the staging at boot.
 */
export function resolveAttachments(
  input: AgentAttachmentsConfig | undefined
): (app: ApplicationService) => Promise<ResolvedAttachments> {
  if (input !== undefined && (typeof input !== 'object' || input === null)) {
    throw new AgentConfigException(
      `Invalid "attachments" in ${CONFIG_FILE}: expected { maxBytes?, allowedContentTypes?, maxPerMessage?, upload?, staging?, unreferencedTtlMs? }`
    )
  }
  const options = input ?? {}
  const maxBytes = positiveInteger(
    'attachments.maxBytes',
    options.maxBytes,
    DEFAULT_MAX_ATTACHMENT_BYTES
  )
  const maxPerMessage = positiveInteger(
    'attachments.maxPerMessage',
    options.maxPerMessage,
    DEFAULT_MAX_ATTACHMENTS_PER_MESSAGE
  )
  const unreferencedTtlMs = positiveInteger(
    'attachments.unreferencedTtlMs',
    options.unreferencedTtlMs,
    DEFAULT_UNREFERENCED_TTL_MS
  )
  const types = options.allowedContentTypes ?? DEFAULT_ALLOWED_CONTENT_TYPES
  if (
    !Array.isArray(types) ||
    !types.length ||
    types.some((type) => typeof type !== 'string' || !/^[\w.+-]+\/[\w.+-]+$/.test(type))
  ) {
    throw new AgentConfigException(
      `Invalid "attachments.allowedContentTypes" in ${CONFIG_FILE}: expected a non-empty list of content types such as "image/png"`
    )
  }
  if (options.upload !== undefined && typeof options.upload !== 'boolean') {
    throw new AgentConfigException(
      `Invalid "attachments.upload" in ${CONFIG_FILE}: expected true or false`
    )
  }
  const factory = options.staging
  if (factory !== undefined && !isStagingFactory(factory)) {
    throw new AgentConfigException(
      `Invalid "attachments.staging" in ${CONFIG_FILE}: expected stagings.fs() or an object with put(attachment, data) and get(id)`
    )
  }
  if (options.upload === true && factory === undefined) {
    throw new AgentConfigException(
      `"attachments.upload: true" in ${CONFIG_FILE} needs "attachments.staging" to keep the uploaded files. Set staging: stagings.fs() (files in tmp/agent-attachments) or your own AttachmentStaging, or remove upload`
    )
  }
  const allowedContentTypes = types.map(normalizeContentType)
  return async (app) => ({
    maxBytes,
    allowedContentTypes,
    maxPerMessage,
    upload: options.upload === true,
    unreferencedTtlMs,
    staging:
      factory === undefined ? null : typeof factory === 'function' ? await factory(app) : factory,
  })
}

function isStagingFactory(value: unknown): value is AttachmentStagingFactory {
  if (typeof value === 'function') return true
  const staging = value as AttachmentStaging | null
  return (
    typeof staging === 'object' &&
    staging !== null &&
    typeof staging.put === 'function' &&
    typeof staging.get === 'function'
  )
}
