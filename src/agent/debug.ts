import { debuglog } from 'node:util'

/**
 * `NODE_DEBUG=atrium:agent` logs decisions (run started, tool denied, step
 * finished), never prompts, tool inputs or outputs.
 */
export default debuglog('atrium:agent')
