import { debuglog } from 'node:util'

/**
 * `NODE_DEBUG=atrium:collaboration` prints the decisions the server takes.
 */
export default debuglog('atrium:collaboration')
