/**
 * The client half of `npm run conformance` (scripts/conformance.mjs runs it after the server half; `node
 * scripts/conformance-client.mjs` runs it alone): the suite's client scenarios, for each revision, with
 * examples/conformance/client.ts as the client.
 *
 * 1. Bundles the client (scripts/bundle.mjs, into node_modules/.cache): the suite starts it once per scenario, and a
 *    bundle starts in a tenth of the time tsx takes, so many can run side by side without starving each other.
 * 2. For each revision (2025-11-25, then 2026-07-28), runs its requirement set (`--requirements <revision>`: the
 *    scenarios it requires, scored, and the ones it runs without scoring, extensions and scenarios added after the
 *    release), every client at that revision's wire, all at once. A scenario that fails and is not in the baseline
 *    is played again alone (`--scenario <name> --spec-version <revision>`): on a small, busy machine forty clients
 *    starting together can miss a scenario's own timing (sse-retry times the reconnection) or race a kept-alive
 *    connection the server is closing; the run says so, and only a failure alone too is a problem.
 * 3. Checks every result against its section of conformance-baseline.yml (`client-<revision>:`: a failure not
 *    listed, or a listed scenario that passes, fails the run), prints the counts of each revision (a scenario
 *    applies unless the baseline says "n/a"), and gives the problems.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { bundle, cacheDir } from "./bundle.mjs"
import {
  listRequirements,
  listScenarios,
  node22,
  passed,
  readBaseline,
  readResults,
  run,
  say,
  suite,
  summarize
} from "./conformance-lib.mjs"

/** The revisions whose client requirement sets are run, each against its own baseline section. */
export const CLIENT_SETS = ["2025-11-25", "2026-07-28"]

/**
 * Runs both revisions' client scenarios into `out`; gives the problems (unexpected results), and `report`, which
 * prints the counts of each revision and gives the scenarios that have no results.
 */
export const clientConformance = async ({ out, seconds }) => {
  const problems = []
  const client = path.join(cacheDir, "conformance", "client.mjs")
  bundle("examples/conformance/client.ts", client)
  const command = [process.execPath, client].join(" ")
  const played = JSON.parse((await run(process.execPath, [client, "--list"])).output)
  const all = readBaseline()
  const baseline = new Map(CLIENT_SETS.map((set) => [`client-${set}`, all.get(`client-${set}`) ?? new Map()]))
  const known = new Set(await listScenarios("client"))
  for (const [section, entries] of baseline) {
    for (const name of entries.keys()) {
      if (!known.has(name)) {
        problems.push(`the baseline lists ${section} scenario ${name}, which the suite does not have`)
      }
    }
  }
  const tallies = []
  for (const set of CLIENT_SETS) {
    const entries = baseline.get(`client-${set}`)
    const { required, unscored } = await listRequirements("client", set)
    say(`client scenarios of ${set}: ${required.length} required, ${unscored.length} not scored (${seconds()})`)
    const dir = path.join(out, `client-${set}`)
    // the whole set in one run of the suite, at the revision's wire: it starts every client at once
    await run(node22, [suite, "client", "--command", command, "--requirements", set, "-o", dir])
    let results = readResults(dir, "")
    // a failure the baseline does not expect is played again alone (a few dozen clients starting together on a
    // small machine can be too slow for a scenario's own timing); what fails alone too is a problem
    const unexpected = [...required, ...unscored].filter((name) =>
      !entries.has(name) && (!results.has(name) || !passed(results.get(name)))
    )
    for (const scenario of unexpected) {
      const again = path.join(out, `client-${set}-again`)
      const alone = await run(node22, [
        suite,
        "client",
        "--command",
        command,
        "--scenario",
        scenario,
        "--spec-version",
        set,
        // an extension has no revision of its own: run it at this one's wire, as the requirement set does
        ...(unscored.includes(scenario) ? ["--force"] : []),
        "-o",
        again
      ])
      const second = readResults(again, "").get(scenario)
      if (second !== undefined && passed(second)) {
        say(`  ${scenario} (${set}) failed among the others and passed alone`)
        results.set(scenario, second)
      } else {
        problems.push(`client scenario ${scenario} (${set}) failed, alone too:\n${alone.output}`)
      }
    }
    // a failure the baseline expects that no longer fails: the entry is stale
    for (const name of entries.keys()) {
      if (results.has(name) && passed(results.get(name))) {
        problems.push(`client scenario ${name} (${set}) passes: remove it from the baseline`)
      }
    }
    tallies.push({ set, required, unscored, entries, results })
  }
  const report = () => {
    const missing = []
    for (const { entries, required, results, set, unscored } of tallies) {
      // a client scenario applies when the example plays it and the baseline does not say "n/a"
      const applies = (name) => played.includes(name) && entries.get(name)?.startsWith("n/a") !== true
      missing.push(...summarize(`client ${set}`, required, results, entries, applies))
      const ran = unscored.filter((name) => results.has(name))
      const passedToo = ran.filter((name) => passed(results.get(name)))
      say(`  not scored (extensions, added after the release): ${passedToo.length} of ${ran.length} passed`)
    }
    return missing
  }
  return { problems, report }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-conformance-client-"))
  const started = Date.now()
  const seconds = () => `${((Date.now() - started) / 1000).toFixed(1)} s`
  clientConformance({ out, seconds }).then(({ problems, report }) => {
    const missing = report()
    fs.rmSync(out, { recursive: true, force: true })
    if (missing.length > 0) problems.push(`scenarios with no results: ${missing.join(", ")}`)
    for (const problem of problems) say(`\n${problem}`)
    say(
      problems.length > 0 ? "\nclient conformance: FAILED" : "\nclient conformance: as conformance-baseline.yml expects"
    )
    process.exitCode = problems.length > 0 ? 1 : 0
  }, (error) => {
    process.stderr.write(`conformance: ${error instanceof Error ? error.message : String(error)}\n`)
    process.exitCode = 1
  })
}
