import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { test } from '@japa/runner'
import MakeAgentTool from '../../commands/make_agent_tool.ts'
import { setupConsoleApp } from '../helpers.ts'
import { agentApp } from './helpers.ts'

const AGENT_MAIN = new URL('../../src/agent/main.ts', import.meta.url).href

/**
 * Imports a generated tool file with its package import pointed at this
 * checkout's sources, so the test runs what the stub produced.
 */
async function importGenerated(basePath: string, source: string) {
  const file = join(basePath, `generated_${Date.now()}_${Math.random().toString(36).slice(2)}.ts`)
  await writeFile(file, source.replace("'adonis-atrium/agent'", `'${AGENT_MAIN}'`))
  return import(file)
}

test.group('make:agent-tool', () => {
  test('writes a functional tool that the gateway runs as generated', async ({ assert, fs }) => {
    const ace = await setupConsoleApp(fs)
    const command = await ace.create(MakeAgentTool, ['refund_order'])
    await command.exec()
    assert.equal(command.exitCode ?? 0, 0)
    const source = await fs.contents('app/agents/tools/refund_order.ts')
    assert.include(source, 'export const refundOrder = defineTool({')
    assert.include(source, 'requiresApproval: false')

    const { refundOrder } = await importGenerated(fs.basePath, source)
    // The scaffold stays in app/agents/ importing adonis-atrium, which this app cannot resolve
    const { chat, fake } = await agentApp({
      config: { tools: [refundOrder], discoverAgents: false },
    })
    fake.reply(
      { toolCalls: [{ id: 'call_g', name: 'refund_order', input: { id: 'A7' } }] },
      { text: ['Done.'] }
    )
    const { sse } = await chat({ message: 'refund A7' })
    await sse.rest()
    const toolMessage = fake.requests[1].body.messages.at(-1)
    assert.equal(toolMessage.role, 'tool')
    assert.deepEqual(JSON.parse(toolMessage.content), { id: 'A7', requestedBy: 'alice' })
  })

  test('--class --approval writes a tool class whose calls wait for approval', async ({
    assert,
    fs,
  }) => {
    const ace = await setupConsoleApp(fs)
    const command = await ace.create(MakeAgentTool, ['close_account_tool', '--class', '--approval'])
    await command.exec()
    const source = await fs.contents('app/agents/tools/close_account.ts')
    assert.include(source, 'export default class CloseAccountTool {')
    assert.include(source, "name: 'close_account'")

    const { default: CloseAccountTool } = await importGenerated(fs.basePath, source)
    assert.deepEqual(CloseAccountTool.spec.requiresApproval, true)
    const { chat, fake } = await agentApp({
      config: { tools: [CloseAccountTool], discoverAgents: false },
    })
    fake.reply({ toolCalls: [{ id: 'call_c', name: 'close_account', input: { id: 'U1' } }] })
    const { sse } = await chat({ message: 'close U1' })
    const frames = await sse.until((frame) => frame.event === 'approval')
    assert.deepEqual(frames.at(-1)!.data, {
      toolCallId: 'call_c',
      toolName: 'close_account',
      input: { id: 'U1' },
    })
  })

  test('an existing file is kept unless --force; a name that makes no tool name exits 1', async ({
    assert,
    fs,
  }) => {
    const ace = await setupConsoleApp(fs)
    await fs.create('app/agents/tools/lookup.ts', 'edited by hand')
    const kept = await ace.create(MakeAgentTool, ['lookup'])
    await kept.exec()
    assert.equal(await fs.contents('app/agents/tools/lookup.ts'), 'edited by hand')
    const forced = await ace.create(MakeAgentTool, ['lookup', '--force'])
    await forced.exec()
    await assert.fileContains('app/agents/tools/lookup.ts', 'export const lookup = defineTool({')

    const invalid = await ace.create(MakeAgentTool, ['x'.repeat(80)])
    invalid.ui.switchMode('raw')
    await invalid.exec()
    assert.equal(invalid.exitCode, 1)
    assert.include(
      invalid.ui.logger
        .getLogs()
        .map((log) => log.message)
        .join('\n'),
      'does not make a valid tool name'
    )
  })
})
