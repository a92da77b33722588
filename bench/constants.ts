/**
 * The benchmark tool's name and texts, in a module of their own that imports nothing: the SDK's server imports it
 * and must load nothing of ours (its start-up time is a baseline).
 */
export const TOOL_NAME = "read_file"

export const DESCRIPTION = "Read a file from disk (a no-op here: the benchmark measures the library around it)"

/** What the handler answers: short, so the wire carries the envelope rather than a payload. */
export const ANSWER = "ok"

/** Row 15: the size of the tool result, in characters of one byte. */
export const RESULT_BYTES = 10 * 1024 * 1024
