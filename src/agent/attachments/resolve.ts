import { AgentForbiddenException, AgentNotFoundException } from '../errors.ts'
import type { ModelMessage } from '../model/port.ts'
import type { MessageAttachment } from '../store/contract.ts'
import type { AgentActor } from '../types.ts'
import type { ResolvedAttachments } from './config.ts'
import { assertAllowedType, assertSize, type AttachmentInput } from './requests.ts'

/**
 * What a user message stores about its attachments: uploaded ones after an
 * ownership check (unknown 404, another actor's 403, as threads and runs),
 * inline ones once staged under the actor. Runs before anything of the
 * turn is written, so a refused attachment leaves no thread.
 */
export async function stageAttachments(
  limits: ResolvedAttachments,
  actor: AgentActor,
  inputs: AttachmentInput[]
): Promise<MessageAttachment[]> {
  const staging = limits.staging!
  const stored: MessageAttachment[] = []
  for (const input of inputs) {
    if (input.kind === 'upload') {
      const found = await staging.get(input.id)
      if (!found) throw new AgentNotFoundException('attachment')
      if (found.attachment.actorRef !== actor.id) throw new AgentForbiddenException('attachment')
      // Limits may have tightened since the upload
      assertAllowedType(found.attachment.contentType, limits.allowedContentTypes, input.field)
      assertSize(found.attachment.size, limits.maxBytes, input.field)
      const { id, name, contentType, size } = found.attachment
      stored.push({ id, name, contentType, size })
    } else {
      const staged = await staging.put(
        {
          actorRef: actor.id,
          name: input.name,
          contentType: input.contentType,
          size: input.data.byteLength,
        },
        input.data
      )
      stored.push({
        id: staged.id,
        name: staged.name,
        contentType: staged.contentType,
        size: staged.size,
      })
    }
  }
  return stored
}

/**
 * Reads the bytes of every attachment of the conversation for one model
 * call. An attachment whose bytes are gone (a cleaned staging) stays with
 * `data: null`, so the model is told it existed instead of the turn failing.
 */
export async function withAttachmentBytes(
  limits: ResolvedAttachments,
  messages: ModelMessage[]
): Promise<ModelMessage[]> {
  const staging = limits.staging
  if (!messages.some((message) => message.role === 'user' && message.attachments?.length)) {
    return messages
  }
  const cache = new Map<string, Uint8Array | null>()
  const result: ModelMessage[] = []
  for (const message of messages) {
    if (message.role !== 'user' || !message.attachments?.length) {
      result.push(message)
      continue
    }
    const attachments = []
    for (const attachment of message.attachments) {
      const id = (attachment as { id?: string }).id
      let data = attachment.data
      if (!data && id && staging) {
        if (!cache.has(id)) {
          const found = await staging.get(id)
          cache.set(id, found?.data ?? null)
        }
        data = cache.get(id)!
      }
      attachments.push({ name: attachment.name, contentType: attachment.contentType, data })
    }
    result.push({ ...message, attachments })
  }
  return result
}
