/**
 * The options more than one command takes, defined once.
 *
 * @internal
 */
import * as Options from "@effect/cli/Options"
import * as Option from "effect/Option"

/** `--root DIR`: the folder the workspace tools are confined to. */
export const root = Options.directory("root", { exists: "yes" }).pipe(
  Options.withDescription("The workspace folder the tools are confined to (default: the current folder)"),
  Options.optional
)

/** The folder `--root` gave, or the current one. */
export const rootOf = (given: Option.Option<string>): string => Option.getOrElse(given, () => process.cwd())
