import { MissingPackageException } from './errors.ts'

/**
 * Imports an optional peer dependency, turning "not installed" into a
 * `MissingPackageException` that names the package and the install command.
 * Any other failure (a syntax error inside the package, a broken install)
 * propagates unchanged.
 *
 * `usedFor` completes "<usedFor> needs "<package>"": e.g.
 * `The "stripe" gateway in config/payments.ts`.
 */
export async function importOptional<T>(
  specifier: string,
  usedFor: string,
  installName: string = packageName(specifier)
): Promise<T> {
  try {
    return (await import(specifier)) as T
  } catch (error) {
    if (isMissing(error, installName)) {
      throw new MissingPackageException([installName], usedFor, { cause: error })
    }
    throw error
  }
}

/**
 * Checks at boot that every optional package a configured part needs resolves,
 * and reports all missing ones in one error. Resolution only: nothing is loaded.
 */
export function assertPackagesInstalled(packages: string[], usedFor: string) {
  const missing = packages.filter((name) => {
    try {
      // Resolved from this package, as the feature's own imports will be
      import.meta.resolve(name)
      return false
    } catch {
      return true
    }
  })
  if (missing.length) {
    throw new MissingPackageException(missing, usedFor)
  }
}

/** `@scope/name/sub` → `@scope/name`, `name/sub` → `name` */
function packageName(specifier: string) {
  const parts = specifier.split('/')
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]
}

function isMissing(error: unknown, name: string) {
  const code = (error as { code?: string })?.code
  if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') {
    return false
  }
  // A missing package nested inside the optional one is that package's own problem
  const message = String((error as Error).message)
  return (
    message.includes(`'${name}'`) || message.includes(`"${name}"`) || message.includes(`${name}/`)
  )
}
