/** Row 7: the no-op tool served by `StdioProvider.main`, the provider side of the JSON-lines protocol. */
import * as StdioProvider from "../../src/StdioProvider.js"
import * as Toolkit from "../../src/Toolkit.js"
import { ReadFileAnswering } from "../fixtures.js"

StdioProvider.main(Toolkit.make(ReadFileAnswering), { maxParallel: 16 })
