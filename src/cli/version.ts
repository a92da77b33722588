/**
 * @internal
 */
import * as fs from "node:fs"

/** The package's version, read once from its package.json. */
export const version: string = (() => {
  try {
    return JSON.parse(fs.readFileSync(new URL("../../package.json", import.meta.url), "utf8")).version
  } catch {
    return "0.0.0"
  }
})()
