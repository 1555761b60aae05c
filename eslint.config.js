import { configPkg, RULES_LIST } from '@adonisjs/eslint-config'

export default configPkg(
  {
    ignores: [
      'tmp/**',
      'examples/demo/tmp/**',
      'examples/demo/public/**',
      'examples/demo/.adonisjs/**',
    ],
  },
  // the console dashboard's and the demo page's TSX get the rules the TypeScript files get
  {
    name: 'Browser pages (TSX)',
    files: ['src/console/ui/**/*.tsx', 'examples/demo/resources/**/*.tsx'],
    languageOptions: { parserOptions: { ecmaFeatures: { jsx: true } } },
    rules: RULES_LIST,
  }
)
