import { debuglog } from 'node:util'

export default debuglog('atrium:pagination')
