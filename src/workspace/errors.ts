/**
 * @internal
 */
import * as Schema from "effect/Schema"

/**
 * Why a workspace tool refused or failed, in words the model can act on ("read it first", "give more context").
 */
export class WorkspaceError extends Schema.TaggedError<WorkspaceError>("effect-agent-tools/WorkspaceError")(
  "WorkspaceError",
  { message: Schema.String }
) {}

/** The most characters of a model's text (a line, a path, a URL) a message quotes: past it, the text is cut. */
export const MAX_QUOTED_LENGTH = 120

/** A model's text quoted for a message: JSON string syntax, cut past {@link MAX_QUOTED_LENGTH} characters. */
export const quoted = (text: string): string =>
  JSON.stringify(text.length > MAX_QUOTED_LENGTH ? `${text.slice(0, MAX_QUOTED_LENGTH)}…` : text)

/**
 * The longest path a tool takes, as Linux's `PATH_MAX`: a longer one is refused before it is walked, quoting only
 * its start, so no message echoes more of a path than this.
 */
export const MAX_PATH_LENGTH = 4096

/** The refusal of a path over {@link MAX_PATH_LENGTH}, or undefined for one within it. */
export const pathTooLong = (path: string): string | undefined =>
  path.length <= MAX_PATH_LENGTH
    ? undefined
    : `the path ${quoted(path)} is ${path.length} characters long, over the ${MAX_PATH_LENGTH} a path may have; ` +
      "give a shorter one"
