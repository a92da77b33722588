/**
 * `npm run conformance`: the official MCP conformance suite (`@modelcontextprotocol/conformance`, installed with a
 * Node 22 of its own in tools/ by `npm ci --prefix tools`) against this library's two edges.
 *
 * 1. Starts examples/conformance/server.ts (Streamable HTTP on a free port) and runs every server scenario against
 *    it (`--suite all`, which includes the ones the suite marks pending).
 * 2. Runs the client scenarios of both revisions with examples/conformance/client.ts as the client
 *    (scripts/conformance-client.mjs, which says how).
 * 3. Checks every result against conformance-baseline.yml (the suite's own `--expected-failures`: a failure not
 *    listed, or a listed scenario that passes, fails the run), and checks that the baseline names only scenarios
 *    the suite has.
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
  baselineFile,
  node22,
  readResults,
  root,
  run,
  say,
  suite,
  suitePackage,
  summarize
} from "./conformance-lib.mjs"

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

/** The baseline's server entries: name to reason (the comment after the entry); the client's sections are its own. */
const readBaseline = () => {
  const entries = { server: new Map() }
  let mode
  for (const line of fs.readFileSync(baselineFile, "utf8").split("\n")) {
    const section = /^([a-z0-9-]+):\s*$/.exec(line)
    if (section !== null) mode = section[1] === "server" ? "server" : undefined
    const entry = /^\s+-\s+(\S+)\s*(?:#\s*(.*))?$/.exec(line)
    if (entry !== null && mode !== undefined) entries[mode].set(entry[1], entry[2] ?? "")
  }
  return entries
}

/** The scenario names the suite lists for a mode. */
const listScenarios = async (mode) => {
  const { code, output } = await run(node22, [suite, "list", `--${mode}`])
  if (code !== 0) throw new Error(`listing the ${mode} scenarios failed:\n${output}`)
  return [...output.matchAll(/^\s+-\s+(\S+)/gm)].map((match) => match[1])
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
    const serverScenarios = await listScenarios("server")
    for (const name of baseline.server.keys()) {
      if (!serverScenarios.includes(name)) {
        problems.push(`the baseline lists server scenario ${name}, which the suite does not have`)
      }
    }
    // the suite's own baseline format: the server section alone
    const serverBaseline = path.join(out, "server.yml")
    fs.writeFileSync(serverBaseline, `server:\n${[...baseline.server.keys()].map((name) => `  - ${name}\n`).join("")}`)

    const url = await startServer()
    say(`server scenarios against ${url} (${seconds()})`)
    const serverRun = await run(node22, [
      suite,
      "server",
      "--url",
      url,
      "--suite",
      "all",
      "--expected-failures",
      serverBaseline,
      "-o",
      path.join(out, "server")
    ])
    if (serverRun.code !== 0) problems.push(`server scenarios:\n${serverRun.output}`)
    await stopServer()

    const clients = await clientConformance({ out, seconds })
    problems.push(...clients.problems)
    say(`\nMCP conformance, @modelcontextprotocol/conformance ${version} (${seconds()})`)
    // a server scenario applies unless the baseline says "n/a"
    const notApplicable = (name) => baseline.server.get(name)?.startsWith("n/a") === true
    const missing = [
      ...summarize(
        "server",
        serverScenarios,
        readResults(path.join(out, "server"), "server-"),
        baseline.server,
        (name) => !notApplicable(name)
      ),
      ...clients.report()
    ]
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
