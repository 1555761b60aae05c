import { useState, type FormEvent } from 'react'
import { api } from './api.ts'

/**
 * The sign-in screen, offering what `/auth/me` said is configured: a
 * username/password form (`login`), "continue with my account" (`session`),
 * or neither.
 */
export function AuthScreen(props: { modes: string[]; onSignedIn: () => void }) {
  const [error, setError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)

  async function attempt(action: () => Promise<void>) {
    setBusy(true)
    setError(null)
    try {
      await action()
      props.onSignedIn()
    } catch (failure) {
      setError((failure as Error).message)
    } finally {
      setBusy(false)
    }
  }

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault()
    const form = new FormData(event.currentTarget)
    void attempt(() => api.login(String(form.get('username')), String(form.get('password'))))
  }

  return (
    <main className="auth">
      <h1>Console</h1>
      {props.modes.includes('login') && (
        <form className="login" onSubmit={submit}>
          <label>
            Username
            <input name="username" autoComplete="username" required />
          </label>
          <label>
            Password
            <input name="password" type="password" autoComplete="current-password" />
          </label>
          <button type="submit" disabled={busy}>
            Sign in
          </button>
        </form>
      )}
      {props.modes.includes('session') && (
        <button
          type="button"
          className="session"
          disabled={busy}
          onClick={() => void attempt(api.session)}
        >
          Continue with my account
        </button>
      )}
      {props.modes.length === 0 && <p>No way to sign in is configured for this console.</p>}
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
    </main>
  )
}
