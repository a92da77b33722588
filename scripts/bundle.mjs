// One esbuild bundle for Node: the agent-tools binary (scripts/bundle-cli.mjs) and the test fixtures that run as
// child processes (test/fixtures/compiled.ts). Every dependency is inlined, so the file runs with plain `node` and
// needs nothing installed next to it: a library user's install never holds the CLI's own dependencies
// (@effect/cli, the printers, @effect/platform-node), and a test spawns a fixture without a TypeScript loader.
//
// A bundle is rebuilt only when it is older than a file it was built from (its sources outside node_modules, as
// esbuild's metafile lists them, and package-lock.json for everything inside): the list of those files is kept in
// node_modules/.cache, never next to the bundle (dist/ is what the package ships).
import * as esbuild from "esbuild"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")

/** Where the lists of inputs (and the compiled test fixtures) live: ignored by git, never packed. */
export const cacheDir = path.join(root, "node_modules/.cache/effect-agent-tools")

/** Where the list of the files `outfile` was built from is kept. */
export const inputsFileOf = (outfile) =>
  path.join(cacheDir, "inputs", `${path.relative(root, outfile).replace(/[/\\]/g, "__")}.json`)

const mtimeOf = (file) => {
  try {
    return fs.statSync(file).mtimeMs
  } catch {
    return Infinity
  }
}

/** Whether `outfile` exists and is newer than every file it was last built from. */
export const isFresh = (outfile) => {
  const built = mtimeOf(outfile)
  if (built === Infinity) return false
  let inputs
  try {
    inputs = JSON.parse(fs.readFileSync(inputsFileOf(outfile), "utf8"))
  } catch {
    return false
  }
  return inputs.every((input) => mtimeOf(path.resolve(root, input)) <= built)
}

/** What each output format needs so that inlined modules find `require` and `import.meta.url`. */
const FORMATS = {
  // CommonJS dependencies (Ajv) call require; an ES module has none of its own
  esm: {
    banner: {
      js:
        "import { createRequire as __createRequire } from \"node:module\"; const require = __createRequire(import.meta.url);"
    }
  },
  // a CommonJS bundle has require; `import.meta.url` (src/cli/version.ts reads package.json beside it) is its file's
  cjs: {
    banner: { js: "var __importMetaUrl = require(\"node:url\").pathToFileURL(__filename).href;" },
    define: { "import.meta.url": "__importMetaUrl" }
  }
}

/**
 * Bundles `entry` (a path from the repository's root) into `outfile` unless it is fresh (or `force`); the file is
 * written under another name and renamed, so a process that runs it never sees half of it. Gives whether it built.
 */
export const bundle = (entry, outfile, { executable = false, force = false, format = "esm", minify = false } = {}) => {
  const target = path.resolve(root, outfile)
  if (!force && isFresh(target)) return false
  const temporary = `${target}.${process.pid}.tmp`
  const result = esbuild.buildSync({
    absWorkingDir: root,
    entryPoints: [entry],
    outfile: temporary,
    bundle: true,
    platform: "node",
    format,
    target: "node20",
    ...FORMATS[format],
    // whitespace and syntax only: names stay, so a stack trace still reads
    minifyWhitespace: minify,
    minifySyntax: minify,
    // a native module cannot be inlined: it is required at run time, from the node_modules beside the bundle (the
    // SQLite journal's driver, an optional peer of the library)
    external: ["better-sqlite3"],
    legalComments: "none",
    logLevel: "warning",
    metafile: true
  })
  if (executable) fs.chmodSync(temporary, 0o755)
  fs.renameSync(temporary, target)
  const inputs = [
    ...Object.keys(result.metafile.inputs).filter((input) => !input.split(/[/\\]/).includes("node_modules")),
    "package-lock.json",
    path.relative(root, fileURLToPath(import.meta.url))
  ]
  const inputsFile = inputsFileOf(target)
  fs.mkdirSync(path.dirname(inputsFile), { recursive: true })
  fs.writeFileSync(inputsFile, JSON.stringify(inputs))
  return true
}

/**
 * The agent-tools binary: src/cli/main.ts bundled as CommonJS into dist/cli/agent-tools.cjs, which V8 can cache
 * compiled, and src/cli/launcher.ts as dist/cli/main.js (the package's `bin`), which runs it from that cache.
 */
export const CLI = {
  entry: "src/cli/main.ts",
  outfile: "dist/cli/agent-tools.cjs",
  launcher: "src/cli/launcher.ts",
  bin: "dist/cli/main.js"
}

export const bundleCli = (options = {}) => {
  // minified, the bundle is 3.3 MB instead of 4.9: less to read at each start (about 10 ms here)
  const built = bundle(CLI.entry, CLI.outfile, { ...options, format: "cjs", minify: true })
  return bundle(CLI.launcher, CLI.bin, { ...options, executable: true }) || built
}
