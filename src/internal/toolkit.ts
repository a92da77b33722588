/**
 * The rule for names a program gives a toolkit (`Toolkit.pick`, `Toolkit.omit`, `Executor.isOutcomeOf`): the types
 * take only the toolkit's names, so one that is not is a name that came through `any`, a programmer error found
 * where it is given.
 *
 * @internal
 */
import type * as Tool from "../Tool.js"
import type * as Toolkit from "../Toolkit.js"

/** The names as a set; throws for one the toolkit does not have, listing its tools. */
export const requireNames = (toolkit: Toolkit.Toolkit<Tool.Any>, names: ReadonlyArray<string>): ReadonlySet<string> => {
  for (const name of names) {
    if (!toolkit.byName.has(name)) {
      const known = toolkit.tools.map((tool) => tool.name).join(", ")
      throw new Error(`no tool ${JSON.stringify(name)} in this toolkit; its tools: ${known}`)
    }
  }
  return new Set(names)
}
