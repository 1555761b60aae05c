/**
 * The loopback fake model of tests/agent/fake_model.ts in a process of its
 * own, as a real model API is: its work never shares the gateway's event
 * loop. It answers every request with the reply given in argv[2] (JSON),
 * argv[3] times, then with the replies sent to it over IPC
 * (`{ replies }`, acknowledged), and sends its URL over IPC once it listens.
 */
import { FakeModelServer } from '../../tests/agent/fake_model.ts'

const fake = await new FakeModelServer().start()
if (process.argv[2]) {
  const reply = JSON.parse(process.argv[2])
  const turns = Number(process.argv[3] ?? 10_000)
  fake.reply(...Array.from({ length: turns }, () => reply))
}
process.on('message', (message: { replies: any[] }) => {
  fake.reply(...message.replies)
  process.send!({ queued: message.replies.length })
})
process.send!({ url: fake.url })
process.on('disconnect', () => fake.close())
