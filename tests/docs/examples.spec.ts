import { test } from '@japa/runner'
import { cp, readdir, readFile, symlink } from 'node:fs/promises'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import Configure from '@adonisjs/core/commands/configure'
import { PACKAGE_ENTRY, setupConsoleApp } from '../helpers.ts'

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url))

/** The comment that keeps the next ```ts block out of the check (a fragment) */
const SKIP_MARKER = /^<!--\s*docs:skip\b.*-->$/

interface Block {
  /** Markdown file, relative to the repository */
  source: string
  /** 1-based line of the block's first code line in that file */
  line: number
  code: string
  /** `app/...` path the block names in its first-line comment, if any */
  appPath?: string
}

/**
 * Every ```ts block of README.md and docs/*.md, except those preceded by
 * `<!-- docs:skip -->`.
 */
async function extractBlocks() {
  const pages = await readdir(join(REPO_ROOT, 'docs'))
  const files = [
    'README.md',
    ...pages
      .filter((name) => name.endsWith('.md'))
      .sort()
      .map((name) => `docs/${name}`),
  ]
  const blocks: Block[] = []
  for (const source of files) {
    const markdown = await readFile(join(REPO_ROOT, source), 'utf8')
    const lines = markdown.split('\n')
    for (let index = 0; index < lines.length; index++) {
      const fence = lines[index].match(/^(\s*)```ts\s*$/)
      if (!fence) continue
      const indent = fence[1].length
      const end = lines.findIndex((text, at) => at > index && /^\s*```\s*$/.test(text))
      const body = lines.slice(index + 1, end === -1 ? undefined : end)
      const previous = lines
        .slice(0, index)
        .reverse()
        .find((text) => text.trim() !== '')
      const skipped = previous !== undefined && SKIP_MARKER.test(previous.trim())
      if (!skipped) {
        const code = body.map((text) => text.slice(indent)).join('\n')
        const named = code.match(/^\/\/ (app\/[\w/]+\.ts)\b/)
        blocks.push({ source, line: index + 2, code, appPath: named?.[1] })
      }
      index = end === -1 ? lines.length : end
    }
  }
  return blocks
}

/**
 * tsconfig `paths` for every export of package.json, pointing at the source
 * the export is built from (`./build/src/x.js` -> `src/x.ts`).
 */
async function packagePaths() {
  const manifest = JSON.parse(await readFile(join(REPO_ROOT, 'package.json'), 'utf8'))
  const paths: Record<string, string[]> = {}
  for (const [key, target] of Object.entries<string>(manifest.exports)) {
    const specifier = key === '.' ? manifest.name : `${manifest.name}/${key.slice(2)}`
    const source = target.replace(/^\.\/build\//, '').replace(/\.js$/, '.ts')
    paths[specifier] = [join(REPO_ROOT, source)]
  }
  // commands/main.js is generated at build time: the app only lazy-imports it
  paths[`${manifest.name}/commands`] = ['./types/atrium_commands.ts']
  return paths
}

/**
 * One program for every file of the app. Syntax errors in one block do not
 * hide type errors in the others (the tsc CLI stops at syntax errors).
 */
function typecheck(tsconfigPath: string) {
  const parsed = ts.getParsedCommandLineOfConfigFile(
    tsconfigPath,
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
        throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'))
      },
    }
  )!
  const program = ts.createProgram(parsed.fileNames, parsed.options)
  const diagnostics = [
    ...program.getOptionsDiagnostics(),
    ...program.getGlobalDiagnostics(),
    ...program
      .getSourceFiles()
      .flatMap((file) => [
        ...program.getSyntacticDiagnostics(file),
        ...program.getSemanticDiagnostics(file),
      ]),
  ]
  return diagnostics.map((diagnostic) => {
    const text = `error TS${diagnostic.code}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ')}`
    if (!diagnostic.file || diagnostic.start === undefined) {
      return { file: '', line: 0, column: 0, text }
    }
    const { line, character } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start)
    return { file: diagnostic.file.fileName, line: line + 1, column: character + 1, text }
  })
}

/** The variables a fresh AdonisJS 7 app validates before configure adds Atrium's */
const FRESH_ENV = `import { Env } from '@adonisjs/core/env'

export default await Env.create(new URL('../', import.meta.url), {
  NODE_ENV: Env.schema.enum(['development', 'production', 'test'] as const),
  PORT: Env.schema.number(),
  APP_KEY: Env.schema.secret(),
  HOST: Env.schema.string({ format: 'host' }),
  LOG_LEVEL: Env.schema.string(),
  REDIS_URL: Env.schema.string.optional(),
})
`

test.group('Docs examples', (group) => {
  group.each.timeout(120_000)

  test('every ```ts block of README.md and docs/ typechecks in a fresh app', async ({
    assert,
    fs,
  }) => {
    // a fresh app on which `node ace configure adonis-atrium --features=all` ran,
    // every payment gateway enabled so the whole published config typechecks
    const ace = await setupConsoleApp(fs)
    await fs.create('start/env.ts', FRESH_ENV)
    const configure = await ace.create(Configure, [
      PACKAGE_ENTRY,
      '--features=all',
      '--gateways=all',
      '--no-install',
    ])
    await configure.exec()
    assert.equal(configure.exitCode, 0)

    await fs.createJson('package.json', {
      name: 'docs-app',
      private: true,
      type: 'module',
      imports: {
        '#controllers/*': './app/controllers/*.js',
        '#middleware/*': './app/middleware/*.js',
        // added by `configure --features=agent`
        '#agents/*': './app/agents/*.js',
        '#models/*': './app/models/*.js',
        '#services/*': './app/services/*.js',
        '#start/*': './start/*.js',
        '#config/*': './config/*.js',
      },
    })
    await fs.createJson('tsconfig.json', {
      extends: '@adonisjs/tsconfig/tsconfig.app.json',
      compilerOptions: {
        noEmit: true,
        // browser examples (a page connecting with y-websocket) use the DOM
        lib: ['ESNext', 'DOM', 'DOM.Iterable'],
        // an example may declare a name only to show it
        noUnusedLocals: false,
        noUnusedParameters: false,
        paths: await packagePaths(),
      },
    })
    await fs.create(
      'types/atrium_commands.ts',
      `export async function getMetaData() { return [] }\nexport async function getCommand() { return null }\n`
    )
    await symlink(join(REPO_ROOT, 'node_modules'), join(fs.basePath, 'node_modules'))

    const blocks = await extractBlocks()
    const where = new Map<string, Block>()
    for (const [index, block] of blocks.entries()) {
      const claimed = block.appPath && !where.has(block.appPath)
      const path = claimed
        ? block.appPath!
        : `docs_examples/${block.source.replace(/\W/g, '_')}_${block.line}_${index}.ts`
      where.set(path, block)
      // `export {}` makes every block a module, so two blocks never share globals
      await fs.create(path, `${block.code}\nexport {}\n`)
    }
    // the app's own code the examples import, unless a block wrote it
    const fixtures = fileURLToPath(new URL('./fixtures/', import.meta.url))
    await cp(fixtures, fs.basePath, { recursive: true, force: false })

    const errors = typecheck(join(fs.basePath, 'tsconfig.json')).map((diagnostic) => {
      const block = where.get(relative(fs.basePath, diagnostic.file))
      if (!block)
        return `${diagnostic.file}:${diagnostic.line}:${diagnostic.column} ${diagnostic.text}`
      // each error points at the markdown line it comes from
      return `${block.source}:${block.line + diagnostic.line - 1}:${diagnostic.column} ${diagnostic.text}`
    })
    errors.sort((a, b) => a.localeCompare(b, 'en', { numeric: true }))
    assert.isAbove(blocks.length, 0)
    assert.deepEqual(errors, [], `${errors.length} docs example errors:\n${errors.join('\n')}`)
  })
})
