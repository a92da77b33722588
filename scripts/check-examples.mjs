// `npm run check` (after tsc): every ```ts example of README.md and docs/*.md type-checks against the source, on its
// own or joined to the examples it says it continues. It fails with the page and line of each broken example.
//
// An example continues earlier ones of the same page when its first line says so:
//   // continues the previous example
//   // continues the example "make"                      (the name of its <!-- example: make --> marker)
//   // continues the examples "make", "invalid" and "json-schema"
// and is then checked as the code of those examples (and of the ones they continue), in page order, followed by
// its own, their imports merged. A name the page gives in prose rather than in code (a temporary folder, the path
// of a script shown in another language) is declared by a comment line of the example:
//   // given: root: string
//
// All examples are checked in one TypeScript program (a few seconds), as files of a folder at the repository's
// root that exists only in memory: `effect` resolves from node_modules, and `effect-agent-tools` (and
// `effect-agent-tools/X`) is mapped to src/ by `paths`.
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import ts from "typescript"

const repository = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")

const GIVEN = /^\/\/ given: ([A-Za-z_$][\w$]*): (.+)$/

const CONTINUES = /^\/\/ continues (?:(the previous example)|the examples? ((?:"[^"]+"(?:, | and )?)+))\s*$/

/**
 * The ```ts blocks of a page: `{ file, line (of the block's first code line, 1-based), name?, code, continues }`,
 * where `continues` lists the indexes of the blocks it continues, and `missing` says which of them is not there.
 */
export const examplesOf = (file, text) => {
  const examples = []
  const lines = text.split("\n")
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] !== "```ts") continue
    const name = /^<!-- example: (\S+) -->$/.exec(lines[i - 1] ?? "")?.[1]
    const start = i + 1
    let end = start
    while (end < lines.length && lines[end] !== "```") end++
    const code = lines.slice(start, end)
    const example = { file, line: start + 1, name, code, continues: [] }
    const first = code.find((l) => l.trim() !== "") ?? ""
    const continues = CONTINUES.exec(first)
    if (continues?.[1] !== undefined) {
      if (examples.length > 0) example.continues.push(examples.length - 1)
      else example.missing = "there is no previous example"
    } else if (continues?.[2] !== undefined) {
      for (const [, wanted] of continues[2].matchAll(/"([^"]+)"/g)) {
        const index = examples.findIndex((e) => e.name === wanted)
        if (index >= 0) example.continues.push(index)
        else example.missing = `there is no earlier example "${wanted}" on the page`
      }
    }
    examples.push(example)
    i = end
  }
  return examples
}

/** `import ... from "m"` statements, one or several lines each; the rest of the code as it is. */
const splitImports = (lines) => {
  const imports = []
  const body = []
  for (let i = 0; i < lines.length; i++) {
    if (/^import\s/.test(lines[i])) {
      let j = i
      while (!/from\s+"[^"]+"\s*;?\s*$|^import\s+"[^"]+"\s*;?\s*$/.test(lines[j]) && j < lines.length - 1) j++
      imports.push({ text: lines.slice(i, j + 1).join("\n"), index: i })
      i = j
    } else {
      body.push({ text: lines[i], index: i })
    }
  }
  return { imports, body }
}

/** Named imports merged per module (`import { a } ...` and `import { b } ...` make `import { a, b } ...`). */
const mergeImports = (imports) => {
  const named = new Map()
  const other = []
  for (const entry of imports) {
    const match = /^import\s+(type\s+)?\{([^}]*)\}\s+from\s+"([^"]+)"/.exec(entry.text.replace(/\n/g, " "))
    if (match === null) {
      if (!other.some((o) => o.text === entry.text)) other.push(entry)
      continue
    }
    const key = `${match[1] ?? ""}${match[3]}`
    const names = match[2].split(",").map((n) => n.trim()).filter((n) => n !== "")
    const known = named.get(key)
    if (known === undefined) named.set(key, { ...entry, type: match[1] ?? "", module: match[3], names })
    else for (const n of names) if (!known.names.includes(n)) known.names.push(n)
  }
  return [
    ...other,
    ...[...named.values()].map((e) => ({ ...e, text: `import ${e.type}{ ${e.names.join(", ")} } from "${e.module}"` }))
  ]
}

/**
 * One example as a module: the code of the examples it continues, then its own, imports merged at the top; each
 * line with the page line it came from.
 */
const moduleOf = (examples, index) => {
  const included = new Set()
  const include = (i) => {
    if (included.has(i)) return
    included.add(i)
    for (const earlier of examples[i].continues) include(earlier)
  }
  include(index)
  const chain = [...included].sort((a, b) => a - b).map((i) => examples[i])
  const imports = []
  const body = []
  for (const example of chain) {
    const split = splitImports(example.code)
    imports.push(...split.imports.map((entry) => ({ ...entry, line: example.line + entry.index })))
    body.push(...split.body.map((entry) => ({ ...entry, line: example.line + entry.index })))
  }
  const lines = []
  const origins = []
  for (const entry of mergeImports(imports)) {
    for (const text of entry.text.split("\n")) {
      lines.push(text)
      origins.push(entry.line)
    }
  }
  // the module is a module even with no import, so names of two examples never meet in the global scope
  lines.push("export {}")
  origins.push(examples[index].line)
  for (const entry of body) {
    const given = GIVEN.exec(entry.text)
    if (given === null) continue
    lines.push(`declare const ${given[1]}: ${given[2]}`)
    origins.push(entry.line)
  }
  for (const entry of body) {
    lines.push(entry.text)
    origins.push(entry.line)
  }
  return { text: lines.join("\n") + "\n", origins }
}

const compilerOptions = (root) => ({
  ...ts.convertCompilerOptionsFromJson(
    JSON.parse(fs.readFileSync(path.join(repository, "tsconfig.base.json"), "utf8")).compilerOptions,
    repository
  ).options,
  noEmit: true,
  incremental: false,
  declaration: false,
  declarationMap: false,
  sourceMap: false,
  // an example shows one thing; what it defines need not all be used
  noUnusedLocals: false,
  noUnusedParameters: false,
  baseUrl: root,
  paths: {
    "effect-agent-tools": ["./src/index.js"],
    "effect-agent-tools/*": ["./src/*.js"]
  }
})

/**
 * Type-checks the examples of `pages` (paths); `root` is where `src/` and `node_modules/` are. Gives the problems
 * as lines `page:line: message`, in page order.
 */
export const checkPages = (pages, root = repository) => {
  const problems = []
  const files = new Map()
  for (const page of pages) {
    const relative = path.relative(root, page)
    const examples = examplesOf(relative, fs.readFileSync(page, "utf8"))
    examples.forEach((example, index) => {
      if (example.missing !== undefined) {
        problems.push(`${relative}:${example.line}: the example continues another, but ${example.missing}`)
        return
      }
      const name = path.join(root, ".examples", `${relative.replace(/[/\\]/g, "__")}__${example.line}.ts`)
      files.set(name, { ...moduleOf(examples, index), page: relative })
    })
  }
  const options = compilerOptions(root)
  const host = ts.createCompilerHost(options)
  const { fileExists, getSourceFile, readFile } = host
  host.fileExists = (file) => files.has(file) || fileExists(file)
  host.readFile = (file) => files.get(file)?.text ?? readFile(file)
  host.getSourceFile = (file, language, ...rest) =>
    files.has(file)
      ? ts.createSourceFile(file, files.get(file).text, language, true)
      : getSourceFile(file, language, ...rest)
  const program = ts.createProgram([...files.keys()], options, host)
  for (const [name, file] of files) {
    const source = program.getSourceFile(name)
    const diagnostics = [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)]
    for (const diagnostic of diagnostics) {
      const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start ?? 0)
      const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n  ")
      problems.push(`${file.page}:${file.origins[line] ?? file.origins[0]}: TS${diagnostic.code}: ${message}`)
    }
  }
  const byPlace = (problem) => {
    const [, page, line] = /^(.*?):(\d+):/.exec(problem)
    return [page, Number(line)]
  }
  return problems.sort((a, b) => {
    const [pa, la] = byPlace(a)
    const [pb, lb] = byPlace(b)
    return pa === pb ? la - lb : pa < pb ? -1 : 1
  })
}

/** README.md and every docs/*.md page. */
export const pages = (root = repository) => [
  path.join(root, "README.md"),
  ...fs.readdirSync(path.join(root, "docs")).filter((f) => f.endsWith(".md")).sort().map((f) =>
    path.join(root, "docs", f)
  )
]

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const started = Date.now()
  const checked = pages()
  const problems = checkPages(checked)
  for (const problem of problems) process.stderr.write(`${problem}\n`)
  const count = checked.reduce(
    (n, page) => n + examplesOf(page, fs.readFileSync(page, "utf8")).length,
    0
  )
  process.stdout.write(
    `examples: ${count} in ${checked.length} pages, ${problems.length} problems (${Date.now() - started} ms)\n`
  )
  if (problems.length > 0) process.exitCode = 1
}
