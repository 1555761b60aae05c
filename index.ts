/**
 * The package entrypoint that `node ace add adonis-atrium` imports: it carries the
 * configure hook and the stubs location, and nothing that loads a feature.
 */
export { configure } from './configure.ts'
export { stubsRoot } from './stubs/main.ts'
