import { assertDocumentName } from '../document_name.ts'
import { CollabValidationError } from '../errors.ts'

const ANCHOR_KINDS = ['text-range', 'canvas-object', 'timestamp'] as const

let validators: ReturnType<typeof buildValidators> | undefined

async function buildValidators() {
  const { default: vine } = await import('@vinejs/vine')
  const docName = () => vine.string().trim().minLength(1).maxLength(255)
  const anchor = vine
    .union([
      vine.union.if(
        (value) => vine.helpers.isObject(value) && (value as any).kind === 'text-range',
        vine.object({
          kind: vine.literal('text-range'),
          start: vine.number().min(0),
          end: vine.number().min(0),
          selectedText: vine.string().maxLength(10_000).optional(),
        })
      ),
      vine.union.if(
        (value) => vine.helpers.isObject(value) && (value as any).kind === 'canvas-object',
        vine.object({
          kind: vine.literal('canvas-object'),
          shapeId: vine.string().minLength(1).maxLength(255),
          relativeX: vine.number(),
          relativeY: vine.number(),
        })
      ),
      vine.union.if(
        (value) => vine.helpers.isObject(value) && (value as any).kind === 'timestamp',
        vine.object({
          kind: vine.literal('timestamp'),
          at: vine.number().min(0),
          end: vine.number().min(0).optional(),
        })
      ),
    ])
    .otherwise((_, field) => {
      field.report(`anchor.kind must be one of ${ANCHOR_KINDS.join(', ')}`, 'anchor', field)
    })
  const paging = {
    page: vine.number().withoutDecimals().min(1).optional(),
    size: vine.number().withoutDecimals().min(1).optional(),
  }
  return {
    doc: vine.compile(vine.object({ doc: docName() })),
    listComments: vine.compile(
      vine.object({ doc: docName(), space: vine.string().maxLength(255).optional(), ...paging })
    ),
    listVersions: vine.compile(vine.object({ doc: docName(), ...paging })),
    createComment: vine.compile(
      vine.object({
        docName: docName(),
        space: vine.string().trim().minLength(1).maxLength(255),
        anchor,
        body: vine.string().trim().minLength(1).maxLength(20_000),
        authorName: vine.string().maxLength(255).optional().nullable(),
      })
    ),
    patchComment: vine.compile(vine.object({ resolved: vine.boolean().optional() })),
    createVersion: vine.compile(
      vine.object({
        docName: docName(),
        label: vine.string().trim().maxLength(255).optional().nullable(),
      })
    ),
    restoreVersion: vine.compile(
      vine.object({
        docName: docName(),
        versionId: vine.string().trim().minLength(1).maxLength(64),
      })
    ),
  }
}

type Validators = Awaited<ReturnType<typeof buildValidators>>

/**
 * Validates a query or body with one of the route schemas; a failure is the
 * 422 `E_COLLAB_VALIDATION` naming every problem, and the document name
 * (`doc` or `docName`) passes the check tokens and storages share.
 */
export async function validate<K extends keyof Validators>(name: K, data: unknown): Promise<any> {
  validators ??= buildValidators()
  const all = await validators
  const compiled = all[name]
  let value: any
  try {
    value = await (compiled as any).validate(data)
  } catch (error: any) {
    if (error?.code === 'E_VALIDATION_ERROR') {
      const messages = (error.messages ?? []).map((entry: any) => entry.message).join('; ')
      throw new CollabValidationError(`Invalid request: ${messages}`)
    }
    throw error
  }
  if ('doc' in value) {
    assertDocumentName(value.doc)
  }
  if ('docName' in value) {
    assertDocumentName(value.docName)
  }
  return value
}
