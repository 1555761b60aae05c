import type Configure from '@adonisjs/core/commands/configure'
import string from '@adonisjs/core/helpers/string'
import {
  canPrompt,
  installFlag,
  installOrListPackages,
  type FeatureInstaller,
  type PackageToInstall,
} from './src/shared/features.ts'
import { paginationInstaller } from './src/pagination/configure.ts'
import { paymentsInstaller } from './src/payments/configure.ts'
import { collaborationInstaller } from './src/collaboration/configure.ts'
import { consoleInstaller } from './src/console/configure.ts'
import { agentInstaller } from './src/agent/configure.ts'

/**
 * Every feature `node ace add adonis-atrium` can install, in prompt order.
 */
export const FEATURE_INSTALLERS: FeatureInstaller[] = [
  collaborationInstaller,
  paymentsInstaller,
  paginationInstaller,
  agentInstaller,
  consoleInstaller,
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

/** The prompt that chooses features when `--features` is absent */
export const SELECT_FEATURES = 'Select the Atrium features to configure'

/**
 * Configures Atrium inside an AdonisJS app: publishes each chosen feature's
 * config and migrations, registers its provider and the package commands,
 * and declares its env variables, then installs (or lists) the packages the
 * chosen features need, once. Running it again changes nothing.
 *
 * Without a terminal nothing is asked: `--features` is required, each
 * feature takes its defaults (payments: Stripe, unless `--gateways`), and the
 * packages are listed unless `--install` is passed.
 */
export async function configure(command: Configure) {
  const known = new Map(FEATURE_INSTALLERS.map((installer) => [installer.name, installer]))
  let selected = featuresFromFlag(command)

  if (selected.length === 0) {
    if (!canPrompt(command, SELECT_FEATURES)) {
      command.exitCode = 1
      command.logger.logError(
        'No terminal to ask which Atrium features to configure: pass ' +
          `--features=${[...known.keys()].join(',')} (any of them) or --features=all`
      )
      return
    }
    selected = await command.prompt.multiple(
      SELECT_FEATURES,
      FEATURE_INSTALLERS.map(({ name, description }) => ({ name, hint: description })),
      { validate: (values) => (values.length ? true : 'Select at least one feature') }
    )
  }

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

  const packages = new Map<string, PackageToInstall>()
  for (const name of new Set(selected)) {
    const installer = known.get(name)!
    const chosen = await installer.install(command, codemods)
    if (chosen === false) return
    for (const entry of chosen ?? installer.packages ?? []) packages.set(entry.name, entry)
  }

  await installOrListPackages(
    command,
    codemods,
    [...packages.values()],
    installFlag(command.parsedFlags.install)
  )
}
