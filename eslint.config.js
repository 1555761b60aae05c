import { configPkg } from '@adonisjs/eslint-config'

export default configPkg({
  ignores: [
    'tmp/**',
    'examples/demo/tmp/**',
    'examples/demo/public/**',
    'examples/demo/.adonisjs/**',
  ],
})
