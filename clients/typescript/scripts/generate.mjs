// Writes src/openapi.ts, the API's types, from Board's OpenAPI document with openapi-typescript.
//
//   npm run generate                          the document this repository's code builds (via uv)
//   npm run generate -- <path or URL>         a saved document, or a server's /api/v1/openapi.json
//   node scripts/generate.mjs <source> --output <file>     (the staleness test writes elsewhere)
//
// The file is committed; tests/clients/test_typescript_client.py regenerates it from the document
// the server serves now and fails when the committed one differs.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import openapiTS, { astToString } from "openapi-typescript";

const PACKAGE = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const REPOSITORY = resolve(PACKAGE, "..", "..");
const HEADER = `/**
 * Board's agent API as TypeScript types, generated from its OpenAPI document by openapi-typescript.
 * Do not edit: run \`npm run generate\` in clients/typescript.
 */

`;
// The document as the server builds it: settings loaded, as in the running server.
const EXPORT = `
import json, django
django.setup()
from todos.agents.api.openapi import document
print(json.dumps(document()))
`;

function parseArguments(argv) {
  let source = null;
  let output = join(PACKAGE, "src", "openapi.ts");
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--output") {
      output = resolve(argv[++i] ?? fail("--output needs a file"));
    } else if (source === null) {
      source = argv[i];
    } else {
      fail(`unexpected argument ${argv[i]}`);
    }
  }
  return { source, output };
}

function fail(message) {
  console.error(`generate: ${message}`);
  process.exit(2);
}

/** The repository's own document, exported by its Python code (uv must be on PATH). */
function exportFromRepository() {
  const text = execFileSync("uv", ["run", "--quiet", "python", "-c", EXPORT], {
    cwd: REPOSITORY,
    env: { ...process.env, DJANGO_SETTINGS_MODULE: "board.settings" },
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  });
  const folder = mkdtempSync(join(tmpdir(), "board-openapi-"));
  const path = join(folder, "openapi.json");
  writeFileSync(path, text);
  return { path, cleanup: () => rmSync(folder, { recursive: true, force: true }) };
}

function asURL(source) {
  return /^https?:\/\//.test(source) ? new URL(source) : pathToFileURL(resolve(source));
}

const { source, output } = parseArguments(process.argv.slice(2));
const exported = source === null ? exportFromRepository() : null;
try {
  const ast = await openapiTS(asURL(exported ? exported.path : source));
  writeFileSync(output, HEADER + astToString(ast));
  console.log(`generate: wrote ${output}`);
} finally {
  exported?.cleanup();
}
