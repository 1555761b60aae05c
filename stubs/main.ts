/**
 * Root of the stubs shipped with Atrium, resolved beside this file in the build.
 */
export const stubsRoot = import.meta.dirname
