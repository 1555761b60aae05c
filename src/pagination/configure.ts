import type { FeatureInstaller } from '../shared/features.ts'
import { stubsRoot } from '../../stubs/main.ts'

/**
 * Pagination has no tables: it publishes its config, its provider and the
 * optional cursor signing secret.
 */
export const paginationInstaller: FeatureInstaller = {
  name: 'pagination',
  description: 'Keyset pagination: FilterRunner with offset and cursor pages',
  async install(_command, codemods) {
    await codemods.makeUsingStub(stubsRoot, 'config/pagination.stub', {})
    await codemods.updateRcFile((rcFile) => {
      rcFile.addProvider('adonis-atrium/providers/pagination_provider')
    })
    await codemods.defineEnvValidations({
      leadingComment: 'Variables for Atrium pagination (cursor signing is optional)',
      variables: {
        PAGINATION_CURSOR_SECRET: 'Env.schema.string.optional()',
      },
    })
  },
}
