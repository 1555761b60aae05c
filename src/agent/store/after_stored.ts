/**
 * The store of a run that started before its own rows were stored (see
 * `startTurn`): every call waits for them first, so the run's answer, usage,
 * tool calls and end never reach the store before its run row does, and
 * fail with it when that write failed.
 */
export function afterStored<Store extends object>(store: Store, stored: Promise<void>): Store {
  return new Proxy(store, {
    get(target, key) {
      const value = Reflect.get(target, key, target)
      if (typeof value !== 'function') return value
      return async (...args: unknown[]) => {
        await stored
        return value.apply(target, args)
      }
    },
  })
}
