// Fails, naming the lines, when the integrator's program (client.ts) casts or escapes its types: an
// `as` or `<T>` assertion, a non-null `!`, or `any`. The program must compile from the generated types
// as they are, or the documents are not telling the truth. Run by test/e2e/typedclient_test.go.
import { readFileSync } from "node:fs";
import ts from "typescript";

const file = process.argv[2] ?? "client.ts";
const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.ES2022, true);
const found = [];
function visit(node) {
  const cast = ts.isAsExpression(node) || ts.isTypeAssertionExpression(node) || ts.isNonNullExpression(node) || node.kind === ts.SyntaxKind.AnyKeyword;
  if (cast) {
    const { line } = source.getLineAndCharacterOfPosition(node.getStart());
    found.push(`${file}:${line + 1}: ${node.getText().slice(0, 80)}`);
  }
  ts.forEachChild(node, visit);
}
visit(source);
if (found.length > 0) {
  console.error(`casts or escapes from the generated types:\n${found.join("\n")}`);
  process.exit(1);
}
