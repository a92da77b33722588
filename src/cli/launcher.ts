#!/usr/bin/env node
/**
 * The `agent-tools` binary's first file (dist/cli/main.js): it runs the CLI's bundle (dist/cli/agent-tools.cjs,
 * main.ts with everything inlined) from V8's code cache, so a start does not compile the bundle's 5 MB again.
 *
 * Why: compiling the bundle was most of a cold start (spawn to listed tools of `agent-tools mcp`: 430 ms, against
 * 190 for the MCP SDK's own server; from the cache, 200). Node 22 has this built in (`module.enableCompileCache`);
 * on Node 20 it is `vm.Script` with `cachedData`. The cache is made on the first run (after the CLI has run a
 * second, or when it exits, so the functions a start runs are in it) and kept per user:
 * `$AGENT_TOOLS_COMPILE_CACHE`, else `$XDG_CACHE_HOME/agent-tools`, else `~/.cache/agent-tools`. Its name holds
 * Node's version and the bundle's size and time, so another Node or another build never reads it; V8 checks the
 * rest and rejects what does not fit, and the bundle is then compiled as without a cache. `NODE_DISABLE_COMPILE_CACHE`
 * (Node's own switch) turns it off. Any failure to read or write the cache is ignored: it only makes a start slower.
 *
 * @internal
 */
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as vm from "node:vm"

/** The bundle, next to this file. */
const bundle = path.join(path.dirname(fileURLToPath(import.meta.url)), "agent-tools.cjs")

/** How long after the start the cache is written, when the process is still running (a server). */
const WRITE_AFTER_MS = 1_000

const cacheDirectory = (): string | undefined => {
  const given = process.env.AGENT_TOOLS_COMPILE_CACHE
  if (given !== undefined && given !== "") return given
  const xdg = process.env.XDG_CACHE_HOME
  if (xdg !== undefined && xdg !== "") return path.join(xdg, "agent-tools")
  const home = os.homedir()
  return home === "" ? undefined : path.join(home, ".cache", "agent-tools")
}

/** The cache file of this bundle on this Node, or undefined when there is none to use. */
const cacheFileOf = (stat: fs.Stats): string | undefined => {
  if (process.env.NODE_DISABLE_COMPILE_CACHE !== undefined) return undefined
  const directory = cacheDirectory()
  if (directory === undefined) return undefined
  const where = crypto.createHash("sha256").update(bundle).digest("hex").slice(0, 16)
  return path.join(
    directory,
    `${where}-${process.version}-${process.arch}-${stat.size}-${Math.trunc(stat.mtimeMs)}.v8`
  )
}

const readOrUndefined = (file: string | undefined): Buffer | undefined => {
  if (file === undefined) return undefined
  try {
    return fs.readFileSync(file)
  } catch {
    return undefined
  }
}

/** Writes under another name and renames: a process starting meanwhile reads the old cache or none, never half. */
const writeCache = (file: string, data: Buffer): void => {
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 })
    const temporary = `${file}.${process.pid}.tmp`
    fs.writeFileSync(temporary, data, { mode: 0o600 })
    fs.renameSync(temporary, file)
    // the caches of this bundle's earlier builds, or of another Node, are of no more use
    const prefix = path.basename(file).slice(0, 17)
    for (const name of fs.readdirSync(path.dirname(file))) {
      if (name.startsWith(prefix) && name !== path.basename(file) && !name.endsWith(".tmp")) {
        fs.rmSync(path.join(path.dirname(file), name), { force: true })
      }
    }
  } catch {
    // a cache that cannot be written only makes the next start slower
  }
}

const run = (): void => {
  // a Node 20 before 20.12 has no way to give `import()` in a vm.Script Node's loader: the bundle runs uncached
  if (vm.constants?.USE_MAIN_CONTEXT_DEFAULT_LOADER === undefined) return void createRequire(import.meta.url)(bundle)
  const stat = fs.statSync(bundle)
  const cacheFile = cacheFileOf(stat)
  const cachedData = readOrUndefined(cacheFile)
  const text = fs.readFileSync(bundle, "utf8")
  // the bundle's own first line is main.ts's `#!`: a comment of the same length keeps its positions
  const body = text.startsWith("#!") ? `//${text.slice(2)}` : text
  const script = new vm.Script(
    `(function (exports, require, module, __filename, __dirname) {${body}\n})`,
    {
      filename: bundle,
      ...(cachedData === undefined ? {} : { cachedData }),
      // `import()` in the bundle (of Node's modules) goes to Node's own loader
      importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER
    }
  )
  if (cacheFile !== undefined && (cachedData === undefined || script.cachedDataRejected === true)) {
    let written = false
    const write = () => {
      if (written) return
      written = true
      writeCache(cacheFile, script.createCachedData())
    }
    setTimeout(write, WRITE_AFTER_MS).unref()
    process.once("exit", write)
  }
  const module = { exports: {} }
  script.runInThisContext()(module.exports, createRequire(bundle), module, bundle, path.dirname(bundle))
}

run()
