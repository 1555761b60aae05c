import type Configure from '@adonisjs/core/commands/configure'
import string from '@adonisjs/core/helpers/string'
import type { FeatureInstaller } from './src/shared/features.ts'
import { paginationInstaller } from './src/pagination/configure.ts'
import { paymentsInstaller } from './src/payments/configure.ts'
import { collaborationInstaller } from './src/collaboration/configure.ts'

/**
 * Every feature `node ace add adonis-atrium` can install, in prompt order.
 */
export const FEATURE_INSTALLERS: FeatureInstaller[] = [
  collaborationInstaller,
  paymentsInstaller,
  paginationInstaller,
]

/**
 * Reads `--features=a,b` (or `all`); an empty value means "ask".
 */
function featuresFromFlag(command: Configure): string[] {
  const flag = command.parsedFlags.features
  if (flag === undefined || flag === true || flag === '') {
    return []
  }
  const names = (Array.isArray(flag) ? flag : [flag])
    .flatMap((value) => String(value).split(','))
    .map((value) => value.trim())
    .filter(Boolean)
  return names.includes('all') ? FEATURE_INSTALLERS.map(({ name }) => name) : names
}

/**
 * Configures Atrium inside an AdonisJS app: publishes each chosen feature's
 * config and migrations, registers its provider and the package commands,
 * and declares its env variables. Running it again changes nothing.
 */
export async function configure(command: Configure) {
  let selected = featuresFromFlag(command)

  if (selected.length === 0) {
    selected = await command.prompt.multiple(
      'Select the Atrium features to configure',
      FEATURE_INSTALLERS.map(({ name, description }) => ({ name, hint: description })),
      { validate: (values) => (values.length ? true : 'Select at least one feature') }
    )
  }

  const known = new Map(FEATURE_INSTALLERS.map((installer) => [installer.name, installer]))
  const unknown = selected.filter((name) => !known.has(name))
  if (unknown.length) {
    command.exitCode = 1
    command.logger.logError(
      `Unknown Atrium feature ${string.sentence(unknown.map((name) => `"${name}"`))}. ` +
        `Use --features with ${string.sentence([...known.keys(), 'all'])}`
    )
    return
  }

  const codemods = await command.createCodemods()
  await codemods.updateRcFile((rcFile) => {
    rcFile.addCommand('adonis-atrium/commands')
  })

  for (const name of new Set(selected)) {
    await known.get(name)!.install(command, codemods)
  }
}
