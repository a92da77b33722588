/**
 * `npm run conformance`: the official MCP conformance suite (`@modelcontextprotocol/conformance`, installed with a
 * Node 22 of its own in tools/ by `npm ci --prefix tools`) against this library's two edges.
 *
 * 1. Starts examples/conformance/server.ts (Streamable HTTP on a free port) and runs both server requirement sets
 *    against it, one after the other: 2025-11-25 (at that revision's wire: `initialize`, sessions) and 2026-07-28
 *    (stateless, `_meta` on every request, `input_required` results). `--requirements` runs exactly the scenarios a
 *    revision requires, plus the ones the suite runs and reports without scoring (pending, extensions).
 * 2. Runs the client requirement sets of both revisions with examples/conformance/client.ts as the client
 *    (scripts/conformance-client.mjs, which says how).
 * 3. Checks every result against conformance-baseline.yml (the suite's own `--expected-failures`, one section per
 *    server set and one per client set: a failure not listed, or a listed scenario that passes, fails the run), and
 *    checks that the baseline names only scenarios the suite has.
 * 4. Prints the counts, stops the server, removes its temporary files, and exits 1 on any unexpected result.
 *
 * A scenario passes when none of its checks fails or warns (the suite's baseline rule); checks are counted as the
 * suite counts them, passed out of passed + failed.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { clientConformance } from "./conformance-client.mjs"
import {
  listRequirements,
  listScenarios,
  node22,
  passed,
  readBaseline,
  readResults,
  root,
  run,
  say,
  suite,
  suitePackage,
  summarize
} from "./conformance-lib.mjs"

/** The server requirement sets run, each against its own section of the baseline (`server-<set>:`). */
const SERVER_SETS = ["2025-11-25", "2026-07-28"]

/** How long the example server may take to print its URL. */
const SERVER_START_MILLIS = 60_000

const started = Date.now()
const seconds = () => `${((Date.now() - started) / 1000).toFixed(1)} s`

// ---------------------------------------------------------------------------------------------------------------
// processes
// ---------------------------------------------------------------------------------------------------------------

let server

/** Starts the example server in a process group of its own; resolves with its endpoint URL. */
const startServer = () =>
  new Promise((resolve, reject) => {
    server = spawn(process.execPath, ["--import", "tsx", "examples/conformance/server.ts"], {
      cwd: root,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"]
    })
    let output = ""
    const timer = setTimeout(
      () => reject(new Error(`the server printed no URL within ${SERVER_START_MILLIS} ms`)),
      SERVER_START_MILLIS
    )
    server.stdout.on("data", (chunk) => {
      output += chunk
      const url = /^(http:\/\/\S+)$/m.exec(output)?.[1]
      if (url !== undefined) {
        clearTimeout(timer)
        resolve(url)
      }
    })
    server.stderr.on("data", (chunk) => (output += chunk))
    server.on("exit", (code, signal) => {
      clearTimeout(timer)
      reject(new Error(`the server exited (${signal ?? code}) before serving:\n${output}`))
    })
  })

/** Ends the server's whole process group: SIGTERM, then SIGKILL after 5 s. */
const stopServer = () =>
  new Promise((resolve) => {
    if (server === undefined || server.exitCode !== null || server.signalCode !== null) return resolve()
    const group = -server.pid
    const kill = setTimeout(() => {
      try {
        process.kill(group, "SIGKILL")
      } catch {
        // already gone
      }
    }, 5_000)
    server.once("exit", () => {
      clearTimeout(kill)
      resolve()
    })
    try {
      process.kill(group, "SIGTERM")
    } catch {
      clearTimeout(kill)
      resolve()
    }
  })

// ---------------------------------------------------------------------------------------------------------------
// the baseline and the results
// ---------------------------------------------------------------------------------------------------------------

/** A baseline in the suite's own format, for one run: the section's names under `mode:`. */
const writeBaseline = (dir, name, mode, entries) => {
  const file = path.join(dir, `${name}.yml`)
  fs.writeFileSync(file, `${mode}:\n${[...entries.keys()].map((scenario) => `  - ${scenario}\n`).join("")}`)
  return file
}

// ---------------------------------------------------------------------------------------------------------------
// the run
// ---------------------------------------------------------------------------------------------------------------

const main = async () => {
  if (!fs.existsSync(node22) || !fs.existsSync(suite)) {
    throw new Error("the conformance suite is not installed: run `npm ci --prefix tools` first")
  }
  if (/\s/.test(process.execPath)) {
    // the suite splits the client command on spaces
    throw new Error(`the path of node (${process.execPath}) has a space in it, which the suite's --command cannot take`)
  }
  const version = JSON.parse(fs.readFileSync(path.join(suitePackage, "package.json"), "utf8")).version
  const out = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-conformance-"))
  const problems = []
  try {
    const baseline = readBaseline()
    const serverScenarios = new Set(await listScenarios("server"))
    for (const [section, entries] of baseline) {
      if (!section.startsWith("server")) continue
      for (const name of entries.keys()) {
        if (!serverScenarios.has(name)) {
          problems.push(`the baseline lists ${section} scenario ${name}, which the suite does not have`)
        }
      }
    }
    const sets = []
    for (const set of SERVER_SETS) {
      const entries = baseline.get(`server-${set}`) ?? new Map()
      sets.push({ set, entries, ...(await listRequirements("server", set)) })
    }

    const url = await startServer()
    for (const { entries, set } of sets) {
      say(`server scenarios of ${set} against ${url} (${seconds()})`)
      const serverRun = await run(node22, [
        suite,
        "server",
        "--url",
        url,
        "--requirements",
        set,
        "--expected-failures",
        writeBaseline(out, `server-${set}`, "server", entries),
        "-o",
        path.join(out, `server-${set}`)
      ])
      if (serverRun.code !== 0) problems.push(`server scenarios of ${set}:\n${serverRun.output}`)
    }
    await stopServer()

    const clients = await clientConformance({ out, seconds })
    problems.push(...clients.problems)
    say(`\nMCP conformance, @modelcontextprotocol/conformance ${version} (${seconds()})`)
    // a server scenario applies unless the baseline says "n/a"
    const missing = []
    for (const { entries, required, set, unscored } of sets) {
      const results = readResults(path.join(out, `server-${set}`), "server-")
      const notApplicable = (name) => entries.get(name)?.startsWith("n/a") === true
      missing.push(...summarize(`server ${set}`, required, results, entries, (name) => !notApplicable(name)))
      const ran = unscored.filter((name) => results.has(name))
      if (ran.length > 0) {
        const passedToo = ran.filter((name) => passed(results.get(name)))
        say(`  not scored (pending, extensions): ${passedToo.length} of ${ran.length} passed`)
      }
    }
    missing.push(...clients.report())
    if (missing.length > 0) problems.push(`scenarios with no results: ${missing.join(", ")}`)
  } finally {
    await stopServer()
    fs.rmSync(out, { recursive: true, force: true })
  }
  if (problems.length > 0) {
    for (const problem of problems) say(`\n${problem}`)
    say("\nconformance: FAILED (a result the baseline does not expect; see above)")
    process.exitCode = 1
  } else {
    say("\nconformance: every result is as conformance-baseline.yml expects")
  }
}

for (const signal of ["SIGINT", "SIGTERM"]) {
  process.once(signal, () => {
    void stopServer().then(() => process.exit(130))
  })
}

main().catch(async (error) => {
  await stopServer()
  process.stderr.write(`conformance: ${error instanceof Error ? error.message : String(error)}\n`)
  process.exitCode = 1
})
