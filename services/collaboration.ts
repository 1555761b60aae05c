import { collaboration } from '../src/collaboration/current.ts'

/**
 * The booted collaboration manager: `collaboration.current` (throws before boot).
 */
export default collaboration
