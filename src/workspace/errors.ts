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
