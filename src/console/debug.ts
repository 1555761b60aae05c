import { debuglog } from 'node:util'

/**
 * `NODE_DEBUG=atrium:console` logs decisions, never payloads or secrets.
 */
export default debuglog('atrium:console')
