/**
 * A bounded fuzzer of the collaboration socket: a seeded PRNG, a fixed number
 * of cases, raw WebSocket frames before and after authorization, then
 * y-protocol sync and awareness messages. Every case must end with the server
 * answering over HTTP, closing with a documented code, or still serving the
 * connection; the process, a bystander route and a real client must survive.
 */
import { test } from '@japa/runner'
import * as encoding from 'lib0/encoding'
import { CLOSE_CODES } from '../../src/collaboration/manager.ts'
import { connectClient, tokenFor, waitFor } from '../collaboration/helpers.ts'
import {
  awarenessMessage,
  message,
  rawClient,
  rawUpgrade,
  serverCloseCode,
  setupHostileApp,
  wsFrame,
} from './collaboration_helpers.ts'

const SEED = Number(process.env.ATRIUM_FUZZ_SEED ?? 0x5eed)
const CASES_PER_PHASE = 100

/** mulberry32: small, fast and reproducible from its seed */
function prng(seed: number) {
  let state = seed >>> 0
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (max: number) => Math.floor(next() * max)
  const bytes = (length: number) => Uint8Array.from({ length }, () => int(256))
  const pick = <T>(items: readonly T[]) => items[int(items.length)]
  return { next, int, bytes, pick }
}
type Random = ReturnType<typeof prng>

/** Codes ws sends for protocol violations, plus every code Atrium documents */
const DOCUMENTED = new Set<number>([1000, 1002, 1007, 1009, ...Object.values(CLOSE_CODES)])

/** One random frame: valid or broken opcode, mask, length and payload */
function randomFrame(random: Random): { frame: Buffer; close: boolean } {
  const opcode = random.pick([0, 1, 2, 2, 2, 3, 8, 9, 10, 11, 15])
  const payload = random.bytes(random.pick([0, 1, 3, 40, 200, 70_000]))
  const lie = random.next() < 0.15
  return {
    frame: wsFrame(payload, {
      opcode,
      mask: random.next() > 0.1,
      fin: random.next() > 0.1,
      declaredLength: lie ? random.pick([126, 65_535, 2 ** 20, 2 ** 31, 2 ** 40]) : undefined,
    }),
    close: opcode === 8,
  }
}

/** One random y-protocol message, well-formed or not */
function randomMessage(random: Random): Uint8Array {
  switch (random.int(7)) {
    case 0:
      // sync step 1 with a random state vector
      return message(0, (encoder) => {
        encoding.writeVarUint(encoder, 0)
        encoding.writeVarUint8Array(encoder, random.bytes(random.int(12)))
      })
    case 1:
    case 2:
      // sync step 2 or update with random bytes as the update
      return message(0, (encoder) => {
        encoding.writeVarUint(encoder, 1 + random.int(2))
        encoding.writeVarUint8Array(encoder, random.bytes(random.int(64)))
      })
    case 3:
      return awarenessMessage(
        Array.from({ length: random.int(12) }, () => [
          random.int(2 ** 31),
          random.int(10),
          random.pick(['null', '{}', '{"user":{"name":"f"}}', 'x'.repeat(random.int(20_000))]),
        ])
      )
    case 4:
      return message(3, () => {})
    case 5:
      // an unknown type, or a truncated varint
      return random.next() < 0.5 ? message(2 + random.int(50), () => {}) : Uint8Array.of(0x80)
    default:
      return random.bytes(1 + random.int(30))
  }
}

test.group('Hostile clients: a bounded fuzzer', () => {
  test('raw frames before authorization are answered over HTTP', async ({ assert }) => {
    const random = prng(SEED)
    const { port, bystander } = await setupHostileApp()
    const paths = [
      '/collaboration/fuzz/1?token=bogus',
      '/collaboration/fuzz/1',
      '/collaboration/%E0%A4%A',
    ]
    for (let index = 0; index < CASES_PER_PHASE; index++) {
      const frames = Buffer.concat(
        Array.from({ length: 1 + random.int(3) }, () => randomFrame(random).frame)
      )
      const raw = await rawUpgrade(port, random.pick(paths), frames)
      assert.oneOf(raw.status, [400, 401], `case ${index}`)
      await raw.ended
    }
    assert.equal(await bystander(), '200 still here')
  })

  test('raw frames after authorization end with a documented close code', async ({ assert }) => {
    const random = prng(SEED + 1)
    const { port, bystander } = await setupHostileApp()
    for (let index = 0; index < CASES_PER_PHASE; index++) {
      const docName = `fuzz/${index % 5}`
      const raw = await rawUpgrade(port, `/collaboration/${docName}?token=${tokenFor(docName)}`)
      assert.equal(raw.status, 101)
      let sentClose = false
      for (let count = 1 + random.int(3); count > 0; count--) {
        const { frame, close } = randomFrame(random)
        sentClose ||= close
        raw.socket.write(frame)
      }
      // half-closing makes the server finish: it cannot wait for the rest of a frame
      raw.socket.end()
      await raw.ended
      const code = serverCloseCode(raw.received())
      if (code !== null && !sentClose) {
        assert.isTrue(DOCUMENTED.has(code), `case ${index}: close code ${code}`)
      }
    }
    assert.equal(await bystander(), '200 still here')
  })

  test('y-protocol messages are served or closed with a documented code', async ({ assert }) => {
    const random = prng(SEED + 2)
    const { wsBase, bystander } = await setupHostileApp({
      authorize: () => ({ canRead: true, canWrite: random.next() < 0.7, canComment: false }),
    })
    const probe = Uint8Array.from(
      message(0, (encoder) => {
        encoding.writeVarUint(encoder, 0)
        encoding.writeVarUint8Array(encoder, Uint8Array.of(0))
      })
    )
    for (let index = 0; index < CASES_PER_PHASE; index++) {
      const docName = `fuzz/${index % 5}`
      const client = rawClient(`${wsBase}/${docName}?token=${tokenFor(docName, `u${index}`)}`)
      await client.opened
      for (let count = 1 + random.int(4); count > 0; count--) {
        client.socket.send(randomMessage(random))
      }
      // the probe (sync step 1 from an empty client) comes after the fuzz: either
      // its answer (sync step 2) arrives, or the server closed the socket first
      client.socket.send(probe)
      const outcome = await Promise.race([
        client.closed.then(({ code }) => code),
        waitFor(
          () => client.messages.some((data) => data[0] === 0 && data[1] === 1),
          5000,
          `case ${index}: the answer to the probe`
        ).then(() => 'served' as const),
      ])
      if (outcome !== 'served') {
        assert.isTrue(DOCUMENTED.has(outcome), `case ${index}: close code ${outcome}`)
      }
      client.socket.terminate()
    }
    assert.equal(await bystander(), '200 still here')
    // a real client still edits every fuzzed document
    const alice = connectClient(wsBase, 'fuzz/0', tokenFor('fuzz/0', 'alice'))
    const bob = connectClient(wsBase, 'fuzz/0', tokenFor('fuzz/0', 'bob'))
    await Promise.all([alice.synced, bob.synced])
    alice.text.insert(0, 'after the fuzz ')
    await waitFor(() => bob.text.toString().includes('after the fuzz '))
  })
})
