import type Configure from '@adonisjs/core/commands/configure'

/**
 * The codemods instance `Configure#createCodemods` resolves to.
 */
export type Codemods = Awaited<ReturnType<Configure['createCodemods']>>

/**
 * One npm package a feature needs in the app.
 */
export type PackageToInstall = Parameters<Codemods['installPackages']>[0][number]

/**
 * What `configure.ts` needs to know of one feature to install it into an app.
 */
export interface FeatureInstaller {
  /** Name used by `--features` and the prompt */
  name: string
  /** One line shown in the prompt */
  description: string
  /**
   * Packages the feature loads in the app; `configure` installs (or lists)
   * those of every chosen feature once, at the end, instead of each asking
   */
  packages?: PackageToInstall[]
  /**
   * Publishes the feature's config, migrations, provider and env variables.
   * Returns the packages to install when they depend on the choices made
   * (they replace `packages`), or false when a flag was wrong: the command
   * then stops with the exit code the installer set.
   */
  install(command: Configure, codemods: Codemods): Promise<void | PackageToInstall[] | false>
}

/**
 * Whether a prompt can be answered: a terminal on stdin, or a test that
 * trapped this very prompt. Without either, the prompt library reads an
 * ended stdin and the process quits half-way through with exit code 0.
 */
export function canPrompt(command: Pick<Configure, 'prompt'>, message: string) {
  return process.stdin.isTTY === true || command.prompt.traps.prompts.has(message)
}

/**
 * Reads `--install` / `--no-install` (also `--install=true|false`);
 * `undefined` when neither was passed.
 */
export function installFlag(value: unknown): boolean | undefined {
  if (value === true || value === 'true') return true
  if (value === false || value === 'false') return false
  return undefined
}

/**
 * Installs `packages` with `--install`, lists the install command with
 * `--no-install`, and asks otherwise. Without a terminal it takes the
 * prompt's default (no) and lists the command, naming `--install`.
 */
export async function installOrListPackages(
  command: Pick<Configure, 'prompt' | 'logger'>,
  codemods: Codemods,
  packages: PackageToInstall[],
  flag: boolean | undefined
) {
  if (packages.length === 0) return
  const names = packages.map(({ name }) => name)
  let install = flag
  if (install === undefined) {
    const question = `Install ${names.join(', ')}?`
    if (canPrompt(command, question)) {
      install = await command.prompt.confirm(question)
    } else {
      command.logger.info(
        `No terminal to ask about installing ${names.join(', ')}: not installed (pass --install to install them)`
      )
      install = false
    }
  }
  if (install) {
    await codemods.installPackages(packages)
  } else {
    await codemods.listPackagesToInstall(packages)
  }
}

/**
 * Publishes a migration stub once: a second `configure` run finds the earlier
 * file by its table name instead of adding a duplicate with a new timestamp.
 */
export async function publishMigrationOnce(
  command: Configure,
  codemods: Codemods,
  stubsRoot: string,
  options: { stub: string; tableName: string; order?: number; action?: 'create' | 'alter' }
) {
  const { readdir } = await import('node:fs/promises')
  const folder = command.app.migrationsPath()
  const suffix = `_${options.action ?? 'create'}_${options.tableName}_table.ts`
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
