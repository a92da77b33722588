/**
 * Why something failed, as the one line a message quotes: `reading the input failed: <reason>`,
 * `tool "x" panicked: <reason>`. Every such message in the library takes its reason from {@link reasonOf}, so a
 * thrown value of any shape (an `Error`, a string, an object with a `message`, anything else) reads the same way
 * everywhere, never as a stack and never longer than a line.
 *
 * @internal
 */
import { preview } from "./argumentProblems.js"

/** The most characters of a reason kept. */
const MAX_REASON_CHARS = 300

const firstLine = (s: string): string => {
  const line = s.split("\n", 1)[0].trim()
  return line.length > MAX_REASON_CHARS ? line.slice(0, MAX_REASON_CHARS) + "…" : line
}

/**
 * The first line of an error's message (its name when the message is empty), a string's first line, or a short
 * rendering of any other value; at most {@link MAX_REASON_CHARS} characters. Never throws: a value whose `message`
 * getter throws reads `a value that cannot be shown`.
 */
export const reasonOf = (error: unknown): string => {
  try {
    if (error instanceof Error) return firstLine(error.message === "" ? error.name : error.message)
    if (typeof error === "string") return firstLine(error)
    if (typeof error === "object" && error !== null && "message" in error && typeof error.message === "string") {
      return firstLine(error.message)
    }
    return preview(error)
  } catch {
    return "a value that cannot be shown"
  }
}
