// Validates Amazon States Language files with AWS's own States Language service (npm
// amazon-states-language-service, pinned in package.json; the validator behind the AWS Toolkit and Workflow
// Studio): `node asl_language_service.js FILE...` prints one JSON object, each file's path -> its diagnostics
// ({line, severity, source, message}; line from 1). Every diagnostic is a finding: the JSON schema's ones
// (a wrong type, an unknown field) come from the same service as its own state checks.
"use strict";

const fs = require("fs");
const { getLanguageService, TextDocument } = require("amazon-states-language-service");

async function diagnostics(service, path) {
  const document = TextDocument.create(`file://${path}`, "json", 1, fs.readFileSync(path, "utf8"));
  const found = await service.doValidation(document, service.parseJSONDocument(document));
  return found.map((d) => ({
    line: d.range.start.line + 1, severity: d.severity, source: d.source ?? null, message: d.message,
  }));
}

async function main() {
  const service = getLanguageService({});
  const report = {};
  for (const path of process.argv.slice(2)) {
    report[path] = await diagnostics(service, path);
  }
  process.stdout.write(JSON.stringify(report));
}

main().catch((error) => {
  process.stderr.write(`${error.stack}\n`);
  process.exit(2);
});
