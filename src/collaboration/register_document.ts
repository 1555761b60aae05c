import type { CallExpression, ObjectLiteralExpression, Project, PropertyAssignment } from 'ts-morph'

/**
 * Adds `...<collection>` to `documents` in config/collaboration.ts, and its
 * import. Returns false, touching nothing, when the file is not the shape
 * `configure` publishes (no `defineConfig({ documents: { ... } })`), so the
 * command prints what to add instead of guessing. Nodes are matched by kind
 * name: ts-morph comes with the app's @adonisjs/assembler, not with Atrium.
 */
export async function registerCollaborationDocument(
  project: Project,
  configPath: string,
  collection: string,
  importPath: string
): Promise<'added' | 'present' | false> {
  const file = project.addSourceFileAtPathIfExists(configPath)
  if (!file) {
    return false
  }
  // the project may hold an earlier read of the file
  await file.refreshFromFileSystem()
  const call = file
    .getDescendants()
    .find(
      (node) =>
        node.getKindName() === 'CallExpression' &&
        (node as CallExpression).getExpression().getText() === 'defineConfig'
    ) as CallExpression | undefined
  const options = call?.getArguments()[0]
  if (options?.getKindName() !== 'ObjectLiteralExpression') {
    return false
  }
  const property = (options as ObjectLiteralExpression).getProperty('documents')
  const documents =
    property?.getKindName() === 'PropertyAssignment'
      ? (property as PropertyAssignment).getInitializer()
      : undefined
  if (documents?.getKindName() !== 'ObjectLiteralExpression') {
    return false
  }
  const literal = documents as ObjectLiteralExpression
  const present = literal
    .getProperties()
    .some(
      (entry) =>
        entry.getKindName() === 'SpreadAssignment' && entry.getText() === `...${collection}`
    )
  if (present) {
    return 'present'
  }
  literal.addSpreadAssignment({ expression: collection })
  // written as text, in the app's style (single quotes, no semicolon)
  if (!file.getImportDeclaration((entry) => entry.getModuleSpecifierValue() === importPath)) {
    const imports = file.getImportDeclarations()
    const line = `import { ${collection} } from '${importPath}'`
    const at = imports.length ? imports[imports.length - 1].getEnd() : 0
    file.insertText(at, imports.length ? `\n${line}` : `${line}\n`)
  }
  await file.save()
  return 'added'
}
