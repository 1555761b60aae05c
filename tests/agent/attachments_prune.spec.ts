import { randomUUID } from 'node:crypto'
import { mkdir, readdir, rm, utimes, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { test } from '@japa/runner'
import AgentPrune from '../../commands/agent_prune.ts'
import { defineConfig, stagings } from '../../src/agent/main.ts'
import { FileSystemAttachmentStaging } from '../../src/agent/attachments/staging.ts'
import { ALICE, actorHeaders, agentApp, bodyOf } from './helpers.ts'

type App = Awaited<ReturnType<typeof agentApp>>

const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64'
)
const IMAGE = { data: PNG.toString('base64'), contentType: 'image/png', name: 'dot.png' }
const DAY_MS = 86_400_000

/** A staging directory of this test alone, removed when it ends */
function stagingDirectory(cleanup: (fn: () => Promise<void>) => void) {
  const directory = join(process.cwd(), 'tmp', `attachments-prune-${randomUUID()}`)
  cleanup(() => rm(directory, { recursive: true, force: true }))
  return directory
}

/** The attachment ids with files in the directory */
async function storedIds(directory: string) {
  const names = await readdir(directory).catch(() => [] as string[])
  return [...new Set(names.map((name) => name.replace(/\.(bin|json)$/, '')))].sort()
}

/** Makes an attachment's files look stored `ms` ago (what the prune reads is their mtime) */
async function age(directory: string, id: string, ms: number) {
  const when = new Date(Date.now() - ms)
  for (const extension of ['bin', 'json']) {
    await utimes(join(directory, `${id}.${extension}`), when, when)
  }
}

async function uploadPng(app: App) {
  const form = new FormData()
  form.append('file', new Blob([PNG], { type: 'image/png' }), 'dot.png')
  const response = await fetch(`${app.url}/agent/attachments`, {
    method: 'POST',
    headers: actorHeaders(ALICE),
    body: form,
  })
  const body = (await response.json()) as { id: string }
  return body.id
}

async function turn(app: App, body: Record<string, unknown>) {
  const { response, sse } = await app.chat(body)
  await sse.rest()
  return response.headers.get('x-agent-thread-id')!
}

async function prune(app: App, args: string[] = []) {
  const ace = await app.app.container.make('ace')
  ace.ui.switchMode('raw')
  const command = await ace.create(AgentPrune, args)
  await command.exec()
  const logs = command.ui.logger.getLogs().map((log: { message: string }) => log.message)
  return { exitCode: command.exitCode, output: logs.join('\n') }
}

test.group('Agent attachment cleanup', () => {
  test('deleting a thread deletes its attachment files, but not those a fork still references', async ({
    assert,
    cleanup,
  }) => {
    const directory = stagingDirectory(cleanup)
    const app = await agentApp({
      config: { attachments: { staging: stagings.fs({ directory }) } },
    })
    app.fake.reply({ text: ['a'] }, { text: ['b'] })
    const kept = await turn(app, { message: 'Look', attachments: [IMAGE] })
    const shared = await turn(app, { message: 'And this', attachments: [IMAGE] })
    const [keptId, sharedId] = await Promise.all(
      [kept, shared].map(async (threadId) => {
        const detail = await bodyOf(await app.request('GET', `/threads/${threadId}`))
        return { id: detail.messages[0].attachments[0].id, messageId: detail.messages[0].id }
      })
    )
    assert.deepEqual(await storedIds(directory), [keptId.id, sharedId.id].sort())
    const forked = await app.request('POST', `/threads/${shared}/fork-from/${sharedId.messageId}`)
    const fork = await bodyOf(forked)

    // The fork references the shared file: deleting the original keeps it
    const deleted = await app.request('DELETE', `/threads/${shared}`)
    assert.equal(deleted.status, 200)
    assert.deepEqual(await storedIds(directory), [keptId.id, sharedId.id].sort())
    // The last thread referencing it goes: its files go
    const forkDeleted = await app.request('DELETE', `/threads/${fork.id}`)
    assert.equal(forkDeleted.status, 200)
    assert.deepEqual(await storedIds(directory), [keptId.id])
    const keptThread = await app.request('GET', `/threads/${kept}`)
    const keptDetail = await bodyOf(keptThread)
    assert.equal(keptDetail.messages[0].attachments[0].id, keptId.id)
  })

  test('truncating a thread deletes the files only its removed messages referenced, not those a fork keeps', async ({
    assert,
    cleanup,
  }) => {
    const directory = stagingDirectory(cleanup)
    const app = await agentApp({
      config: { attachments: { staging: stagings.fs({ directory }) } },
    })
    app.fake.reply({ text: ['a'] }, { text: ['b'] })
    const threadId = await turn(app, { message: 'Look', attachments: [IMAGE] })
    await turn(app, { threadId, message: 'And this', attachments: [IMAGE] })
    const detail = await bodyOf(await app.request('GET', `/threads/${threadId}`))
    const questions = detail.messages.filter((message: any) => message.role === 'user')
    const [first, second] = questions.map((message: any) => ({
      messageId: message.id,
      file: message.attachments[0].id,
    }))
    assert.deepEqual(await storedIds(directory), [first.file, second.file].sort())

    // The second question goes, with the file only it carried
    const truncated = await app.request('DELETE', `/threads/${threadId}/from/${second.messageId}`)
    assert.equal(truncated.status, 200)
    assert.deepEqual(await storedIds(directory), [first.file])

    // A fork still references the first file: truncating the original keeps it
    const forked = await app.request('POST', `/threads/${threadId}/fork-from/${first.messageId}`)
    assert.equal(forked.status, 200)
    const all = await app.request('DELETE', `/threads/${threadId}/from/${first.messageId}`)
    assert.equal(all.status, 200)
    assert.deepEqual(await storedIds(directory), [first.file])
    const after = await bodyOf(await app.request('GET', `/threads/${threadId}`))
    assert.lengthOf(after.messages, 0)
  })

  test('agent:prune deletes unreferenced attachments past unreferencedTtlMs; --dry-run only lists them', async ({
    assert,
    cleanup,
  }) => {
    const directory = stagingDirectory(cleanup)
    const app = await agentApp({
      config: {
        attachments: {
          staging: stagings.fs({ directory }),
          upload: true,
          unreferencedTtlMs: DAY_MS,
        },
      },
    })
    app.fake.reply({ text: ['ok'] }, { text: ['ok'] }, { text: ['ok'] })
    const neverSent = await uploadPng(app)
    const fresh = await uploadPng(app)
    const sent = await uploadPng(app)
    const sentThread = await turn(app, { message: 'Look', attachments: [{ id: sent }] })
    // A thread deleted before deletes removed its files (older versions): only the prune finds it
    const orphanThread = await turn(app, { message: 'Old', attachments: [IMAGE] })
    const orphanDetail = await bodyOf(await app.request('GET', `/threads/${orphanThread}`))
    const [orphan] = orphanDetail.messages[0].attachments
    await app.db.from('agent_threads').where('id', orphanThread).update({ deleted_at: new Date() })
    for (const id of [neverSent, sent, orphan.id]) await age(directory, id, DAY_MS + 60_000)
    const all = [neverSent, fresh, sent, orphan.id].sort()
    assert.deepEqual(await storedIds(directory), all)

    const dryRun = await prune(app, ['--dry-run'])
    assert.equal(dryRun.exitCode, 0)
    assert.include(dryRun.output, `would delete ${neverSent}`)
    assert.include(dryRun.output, `would delete ${orphan.id}`)
    assert.notInclude(dryRun.output, sent)
    assert.notInclude(dryRun.output, fresh)
    assert.match(dryRun.output, /Dry run: 2 of 3 attachments older than .* are unreferenced/)
    assert.deepEqual(await storedIds(directory), all)

    const run = await prune(app)
    assert.equal(run.exitCode, 0)
    assert.match(run.output, /Deleted 2 unreferenced attachments \(3 older than/)
    assert.deepEqual(await storedIds(directory), [fresh, sent].sort())
    // A second run finds nothing more: safe to schedule on every instance
    const again = await prune(app)
    assert.match(again.output, /Deleted 0 unreferenced attachments \(1 older than/)
    // The sent file still reaches the model on the thread's next turn
    await turn(app, { threadId: sentThread, message: 'Again' })
    const body = app.fake.requests.at(-1)!.body
    const [question] = (body.messages as Array<{ role: string; content: any }>).filter(
      (message) => message.role === 'user'
    )
    assert.equal(question.content[1].image_url.url, `data:image/png;base64,${IMAGE.data}`)
  })

  test('agent:prune without a staging that can be pruned says what is missing and exits 1', async ({
    assert,
  }) => {
    const bare = await agentApp()
    const { exitCode, output } = await prune(bare)
    assert.equal(exitCode, 1)
    assert.include(output, 'Nothing to prune: "attachments.staging" is not set in config/agent.ts')

    const readOnly = await agentApp({
      config: { attachments: { staging: { put: async () => ({}) as any, get: async () => null } } },
    })
    const refused = await prune(readOnly)
    assert.equal(refused.exitCode, 1)
    assert.include(refused.output, 'it needs list() and delete() (stagings.fs() has both)')
  })

  test('the file-system staging deletes both files, ignores ids it never wrote, and lists leftover bytes', async ({
    assert,
    cleanup,
  }) => {
    const directory = stagingDirectory(cleanup)
    const staging = new FileSystemAttachmentStaging(directory)
    // Nothing stored yet: the directory does not exist
    assert.deepEqual(await Array.fromAsync(staging.list()), [])
    const one = await staging.put(
      { actorRef: 'a', name: 'a.png', contentType: 'image/png', size: 3 },
      PNG
    )
    const two = await staging.put(
      { actorRef: 'a', name: 'b.png', contentType: 'image/png', size: 3 },
      PNG
    )
    // Bytes whose metadata a crash never wrote, and files the staging never writes
    const leftover = randomUUID()
    await mkdir(directory, { recursive: true })
    await writeFile(join(directory, `${leftover}.bin`), PNG)
    await writeFile(join(directory, 'notes.txt'), 'kept')
    const listed = await Array.fromAsync(staging.list())
    assert.deepEqual(listed.map(({ id }) => id).sort(), [one.id, two.id, leftover].sort())
    assert.isTrue(listed.every(({ storedAt }) => storedAt instanceof Date))

    await staging.delete(one.id)
    await staging.delete(leftover)
    await staging.delete('../notes')
    await staging.delete(randomUUID())
    assert.isNull(await staging.get(one.id))
    assert.isNotNull(await staging.get(two.id))
    const left = await readdir(directory)
    assert.deepEqual(left.sort(), [`${two.id}.bin`, `${two.id}.json`, 'notes.txt'].sort())
  })

  test('defineConfig names a bad attachments.unreferencedTtlMs', ({ assert }) => {
    const base = { model: {} as any, actorResolver: () => ({ id: 'a', roles: [] }) }
    assert.throws(
      () => defineConfig({ ...base, attachments: { unreferencedTtlMs: -1 } }),
      'Invalid "attachments.unreferencedTtlMs" in config/agent.ts: expected a positive integer, received -1'
    )
  })
})
