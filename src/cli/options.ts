/**
 * The options more than one command takes, defined once.
 *
 * @internal
 */
import * as Options from "@effect/cli/Options"
import * as Option from "effect/Option"
import type * as Workspace from "../Workspace.js"

/** `--root DIR`: the folder the workspace tools are confined to. */
export const root = Options.directory("root", { exists: "yes" }).pipe(
  Options.withDescription("The workspace folder the tools are confined to (default: the current folder)"),
  Options.optional
)

/** The folder `--root` gave, or the current one. */
export const rootOf = (given: Option.Option<string>): string => Option.getOrElse(given, () => process.cwd())

/** `--fetch`: the workspace toolkit gains `fetch` (network access, so off unless asked for). */
export const fetch = Options.boolean("fetch").pipe(
  Options.withDescription("Add the fetch tool: HTTP GET of public URLs, HTML as Markdown (network access)")
)

/** The workspace toolkit's options from `--root` and `--fetch`. */
export const workspaceOf = (given: Option.Option<string>, fetch: boolean): Workspace.Options => ({
  root: rootOf(given),
  fetch
})
