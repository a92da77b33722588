/**
 * Effect's `Console` on stderr, for a process whose stdout carries a protocol (an MCP server or a stdio tool
 * provider on its stdin and stdout): `Console.log` and every built-in logger write through it, and one stray line
 * on stdout would break the peer on the other end.
 *
 * @internal
 */
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import { Console as NodeConsole } from "node:console"

/** A `Console` whose every method writes to stderr. */
export const stderrConsole = (): Console.Console => {
  const unsafe = new NodeConsole({ stdout: process.stderr, stderr: process.stderr })
  const sync = (f: () => void) => Effect.sync(f)
  return {
    [Console.TypeId]: Console.TypeId,
    assert: (condition, ...args) => sync(() => unsafe.assert(condition, ...args)),
    clear: sync(() => unsafe.clear()),
    count: (label) => sync(() => unsafe.count(label)),
    countReset: (label) => sync(() => unsafe.countReset(label)),
    debug: (...args) => sync(() => unsafe.debug(...args)),
    dir: (item, options) => sync(() => unsafe.dir(item, options)),
    dirxml: (...args) => sync(() => unsafe.dirxml(...args)),
    error: (...args) => sync(() => unsafe.error(...args)),
    group: (options) =>
      sync(() => (options?.collapsed === true ? unsafe.groupCollapsed(options.label) : unsafe.group(options?.label))),
    groupEnd: sync(() => unsafe.groupEnd()),
    info: (...args) => sync(() => unsafe.info(...args)),
    log: (...args) => sync(() => unsafe.log(...args)),
    table: (data, properties) => sync(() => unsafe.table(data, properties as Array<string> | undefined)),
    time: (label) => sync(() => unsafe.time(label)),
    timeEnd: (label) => sync(() => unsafe.timeEnd(label)),
    timeLog: (label, ...args) => sync(() => unsafe.timeLog(label, ...args)),
    trace: (...args) => sync(() => unsafe.trace(...args)),
    warn: (...args) => sync(() => unsafe.warn(...args)),
    unsafe
  }
}
