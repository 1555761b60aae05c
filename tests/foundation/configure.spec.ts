import { test } from '@japa/runner'
import Configure from '@adonisjs/core/commands/configure'
import { FEATURE_INSTALLERS } from '../../configure.ts'
import { PACKAGE_ENTRY, setupConsoleApp } from '../helpers.ts'

test.group('Configure', (group) => {
  group.each.timeout(60_000)

  test('--features=pagination publishes its config, provider, commands and env validation', async ({
    assert,
    fs,
  }) => {
    const ace = await setupConsoleApp(fs)
    const command = await ace.create(Configure, [PACKAGE_ENTRY, '--features=pagination'])
    await command.exec()

    assert.equal(command.exitCode, 0)
    await assert.fileContains('config/pagination.ts', [
      `import { defineConfig } from 'adonis-atrium/pagination'`,
      `cursorSecret: env.get('PAGINATION_CURSOR_SECRET')`,
    ])
    await assert.fileContains('adonisrc.ts', [
      `() => import('adonis-atrium/commands')`,
      `() => import('adonis-atrium/providers/pagination_provider')`,
    ])
    await assert.fileContains(
      'start/env.ts',
      'PAGINATION_CURSOR_SECRET: Env.schema.string.optional()'
    )
  })

  test('without --features the features are chosen in a prompt', async ({ assert, fs }) => {
    const ace = await setupConsoleApp(fs)
    ace.prompt
      .trap('Select the Atrium features to configure')
      .assertFails([] as any, 'Select at least one feature')
      .chooseOptions([FEATURE_INSTALLERS.findIndex(({ name }) => name === 'pagination')])
    const command = await ace.create(Configure, [PACKAGE_ENTRY, '--no-install'])
    await command.exec()

    assert.equal(command.exitCode, 0)
    await assert.fileExists('config/pagination.ts')
    await assert.fileContains('adonisrc.ts', 'adonis-atrium/providers/pagination_provider')
    await assert.fileNotExists('config/payments.ts')
  })

  test('--features=all configures every feature', async ({ assert, fs }) => {
    const ace = await setupConsoleApp(fs)
    const command = await ace.create(Configure, [PACKAGE_ENTRY, '--features=all', '--no-install'])
    await command.exec()

    assert.equal(command.exitCode, 0)
    for (const name of FEATURE_INSTALLERS.map((installer) => installer.name)) {
      await assert.fileExists(`config/${name}.ts`)
    }
  })

  test('an unknown feature is an error with exit code 1 that names it', async ({ assert, fs }) => {
    const ace = await setupConsoleApp(fs)
    const command = await ace.create(Configure, [PACKAGE_ENTRY, '--features=pagination,chat'])
    await command.exec()

    assert.equal(command.exitCode, 1)
    const errors = ace.ui.logger.getLogs().map(({ message }) => message)
    assert.isTrue(
      errors.some((message) => message.includes('Unknown Atrium feature "chat"')),
      errors.join('\n')
    )
    await assert.fileNotExists('config/pagination.ts')
    await assert.fileNotContains('adonisrc.ts', 'adonis-atrium')
  })

  test('running configure twice duplicates nothing', async ({ assert, fs }) => {
    const ace = await setupConsoleApp(fs)
    const first = await ace.create(Configure, [PACKAGE_ENTRY, '--features=pagination'])
    await first.exec()
    const published = {
      rc: await fs.contents('adonisrc.ts'),
      env: await fs.contents('start/env.ts'),
      config: await fs.contents('config/pagination.ts'),
    }
    const again = await ace.create(Configure, [PACKAGE_ENTRY, '--features=pagination'])
    await again.exec()

    assert.equal(again.exitCode, 0)
    assert.equal(await fs.contents('adonisrc.ts'), published.rc)
    assert.equal(await fs.contents('start/env.ts'), published.env)
    assert.equal(await fs.contents('config/pagination.ts'), published.config)
  })
})
