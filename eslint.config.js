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
  // the console dashboard's TSX gets the rules the TypeScript files get
  {
    name: 'Console dashboard (TSX)',
    files: ['src/console/ui/**/*.tsx'],
    languageOptions: { parserOptions: { ecmaFeatures: { jsx: true } } },
    rules: RULES_LIST,
  }
)
