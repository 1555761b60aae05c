import { PaymentsConfigException } from '../errors.ts'

/**
 * One JSON request to a gateway's API; a non-2xx answer throws naming the
 * gateway, the status and the gateway's own message (never the credential).
 */
export async function gatewayApi(
  gateway: string,
  url: string,
  init: { method?: string; token?: string; body?: unknown; headers?: Record<string, string> }
): Promise<any> {
  const response = await fetch(url, {
    method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
    headers: {
      accept: 'application/json',
      ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(init.token ? { authorization: `Bearer ${init.token}` } : {}),
      ...init.headers,
    },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
    signal: AbortSignal.timeout(15_000),
  })
  const text = await response.text()
  let answer: any
  try {
    answer = text ? JSON.parse(text) : undefined
  } catch {
    answer = undefined
  }
  if (!response.ok) {
    const detail = answer?.error?.detail ?? answer?.detail ?? answer?.message ?? answer?.title
    throw new Error(
      `${gateway} answered ${response.status}${typeof detail === 'string' ? `: ${detail.slice(0, 200)}` : ''}`
    )
  }
  return answer
}

/** The credential `--create` needs, or a config error naming the option and its env variable */
export function needed(value: string | undefined, gateway: string, option: string, env: string) {
  if (!value) {
    throw new PaymentsConfigException(
      `Missing "providers.<name>.${option}" for ${gateway} in config/payments.ts. Set ${env} to create endpoints`
    )
  }
  return value
}
