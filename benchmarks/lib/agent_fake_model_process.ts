/**
 * The loopback fake model of tests/agent/fake_model.ts in a process of its
 * own, as a real model API is: its work never shares the gateway's event
 * loop. It answers every request with the reply given in argv[2] (JSON) and
 * sends its URL over IPC once it listens.
 */
import { FakeModelServer } from '../../tests/agent/fake_model.ts'

const reply = JSON.parse(process.argv[2])
const turns = Number(process.argv[3] ?? 10_000)
const fake = await new FakeModelServer().start()
fake.reply(...Array.from({ length: turns }, () => reply))
process.send!({ url: fake.url })
process.on('disconnect', () => fake.close())
