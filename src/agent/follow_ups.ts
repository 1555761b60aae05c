import type { ModelMessage } from './model/port.ts'

/** The longest follow-up question kept, in characters */
const MAX_QUESTION_LENGTH = 300

/**
 * The follow-up call's own instructions. The agent's system prompt is left
 * out: it may ask for tools or formats that would break the JSON answer.
 */
export const FOLLOW_UPS_SYSTEM =
  'You propose the questions a user is likely to ask next in a conversation with an assistant. ' +
  'Write them in the language of the conversation, each short and answerable by the assistant. ' +
  'Answer with a JSON array of strings and nothing else.'

/**
 * What the follow-up call sends: the conversation as text (tool calls and
 * results left out, since no tool is declared to this call) and one user
 * turn asking for the questions, as providers expect a user message last.
 */
export function followUpMessages(history: ModelMessage[], count: number): ModelMessage[] {
  const messages: ModelMessage[] = []
  for (const message of history) {
    if (message.role === 'user') messages.push({ role: 'user', text: message.text })
    else if (message.role === 'assistant' && message.text) {
      messages.push({ role: 'assistant', text: message.text, toolCalls: [] })
    }
  }
  messages.push({
    role: 'user',
    text: `Propose ${count} follow-up question${count === 1 ? '' : 's'} I could ask next, as a JSON array of strings.`,
  })
  return messages
}

/**
 * The questions of the model's answer: a JSON array of strings (in a code
 * fence or not), else one question per line with list markers removed.
 * Empty, repeated and overlong entries are dropped; at most `count` kept.
 */
export function parseFollowUps(text: string, count: number): string[] {
  const unfenced = text
    .trim()
    .replace(/^```[a-z]*\s*/i, '')
    .replace(/\s*```$/, '')
  let candidates: unknown[]
  try {
    const parsed: unknown = JSON.parse(unfenced)
    candidates = Array.isArray(parsed) ? parsed : []
  } catch {
    candidates = unfenced.split('\n').map((line) => line.replace(/^\s*(?:[-*•]|\d+[.)])\s*/, ''))
  }
  const questions: string[] = []
  for (const candidate of candidates) {
    if (typeof candidate !== 'string') continue
    const question = candidate.replace(/\s+/g, ' ').trim()
    if (!question || question.length > MAX_QUESTION_LENGTH || questions.includes(question)) continue
    questions.push(question)
    if (questions.length === count) break
  }
  return questions
}
