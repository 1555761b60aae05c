import { readFile, unlink } from 'node:fs/promises'
import type { HttpContext } from '@adonisjs/core/http'
import { AgentInvalidRequestException } from '../errors.ts'
import type { AgentManager } from '../manager.ts'
import { normalizeContentType } from './config.ts'
import { assertAllowedType, assertSize, cleanName } from './requests.ts'

/**
 * `POST /<path>/attachments` (with `attachments.upload: true`): one
 * multipart file in the field `file`, kept by the staging under the actor
 * who sent it. The content type is the one the body parser detects from
 * the bytes (their magic number) for the types it knows (images, PDF);
 * text has none, so its part's declared type is used, still checked
 * against `allowedContentTypes`.
 */
export async function uploadAttachment(ctx: HttpContext) {
  const agents: AgentManager = await ctx.containerResolver.make('atrium.agent')
  // The body parser wrote every part to a temporary file before this runs: each is
  // removed whatever the answer, a 401 included
  const parts = Object.values(ctx.request.allFiles()).flat()
  const tmpPaths = parts.flatMap((part) => (part.tmpPath ? [part.tmpPath] : []))
  try {
    const actor = await agents.actor(ctx)
    const limits = agents.config.attachments
    const file = ctx.request.file('file')
    if (!file || !file.tmpPath) {
      throw new AgentInvalidRequestException(
        'Send the file as multipart/form-data in the field "file"',
        'file'
      )
    }
    assertSize(file.size, limits.maxBytes, 'file')
    const detected = file.type && file.subtype ? `${file.type}/${file.subtype}` : ''
    const contentType = normalizeContentType(detected || 'application/octet-stream')
    assertAllowedType(contentType, limits.allowedContentTypes, 'file')
    const data = await readFile(file.tmpPath)
    // The size on disk is the size kept, whatever the part's headers said
    assertSize(data.byteLength, limits.maxBytes, 'file')
    const staged = await limits.staging!.put(
      {
        actorRef: actor.id,
        name: cleanName(file.clientName) || 'attachment',
        contentType,
        size: data.byteLength,
      },
      new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
    )
    ctx.response.status(201)
    return {
      id: staged.id,
      name: staged.name,
      contentType: staged.contentType,
      size: staged.size,
    }
  } finally {
    await Promise.all(tmpPaths.map((path) => unlink(path).catch(() => {})))
  }
}
