/**
 * @internal
 */
import * as Schema from "effect/Schema"
import { quoted } from "../internal/quote.js"

export { quoted } from "../internal/quote.js"

/**
 * Why a workspace tool refused or failed, in words the model can act on ("read it first", "give more context").
 */
export class WorkspaceError extends Schema.TaggedError<WorkspaceError>("effect-agent-tools/WorkspaceError")(
  "WorkspaceError",
  { message: Schema.String }
) {}

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
