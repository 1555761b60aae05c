import { debuglog } from 'node:util'

/**
 * `NODE_DEBUG=atrium:payments` logs decisions, never payloads or secrets.
 */
export default debuglog('atrium:payments')
