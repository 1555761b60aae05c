import type Configure from '@adonisjs/core/commands/configure'

/**
 * The codemods instance `Configure#createCodemods` resolves to.
 */
export type Codemods = Awaited<ReturnType<Configure['createCodemods']>>

/**
 * What `configure.ts` needs to know of one feature to install it into an app.
 */
export interface FeatureInstaller {
  /** Name used by `--features` and the prompt */
  name: string
  /** One line shown in the prompt */
  description: string
  /** Publishes the feature's config, migrations, provider and env variables */
  install(command: Configure, codemods: Codemods): Promise<void>
}

/**
 * Publishes a migration stub once: a second `configure` run finds the earlier
 * file by its table name instead of adding a duplicate with a new timestamp.
 */
export async function publishMigrationOnce(
  command: Configure,
  codemods: Codemods,
  stubsRoot: string,
  options: { stub: string; tableName: string; order?: number }
) {
  const { readdir } = await import('node:fs/promises')
  const folder = command.app.migrationsPath()
  const suffix = `_create_${options.tableName}_table.ts`
  const existing = await readdir(folder).catch(() => [] as string[])
  if (existing.some((file) => file.endsWith(suffix))) {
    command.logger.action(`create database/migrations/*${suffix}`).skipped('already exists')
    return
  }

  /**
   * Several migrations published in one run share a timestamp; the order
   * keeps foreign keys after the tables they point to.
   */
  const fileName = `${Date.now() + (options.order ?? 0)}${suffix}`
  await codemods.makeUsingStub(stubsRoot, options.stub, {
    entity: command.app.generators.createEntity(options.tableName),
    migration: { folder: 'database/migrations', fileName },
  })
}
