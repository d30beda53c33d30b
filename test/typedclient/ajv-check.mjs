// Validates answers against the served OpenAPI documents with Ajv 8 in strict mode, as a strict
// JavaScript validator of an integrator would. Started once per Go test process by
// api/openapi/openapitest with one argument per document (name=path of its JSON); it reads one
// answer a line, {"doc", "path", "method", "status", "body"}, and writes one line back: "ok", or
// what Ajv found wrong. It first compiles every schema of every document, requests' and components'
// as well as answers', and a schema Ajv refuses fails every answer, naming it.
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import Ajv from "ajv";
import addFormats from "ajv-formats";

const ajv = new Ajv({ strict: true, allErrors: true });
addFormats(ajv);
// OpenAPI's own annotations, and its integer formats, which JSON Schema leaves to the application.
ajv.addKeyword({ keyword: "example" });
ajv.addKeyword({ keyword: "discriminator" });
ajv.addFormat("int32", { type: "number", validate: (n) => Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31 });
ajv.addFormat("int64", { type: "number", validate: (n) => Number.isInteger(n) });

// A document's schemas become the definitions of a JSON Schema named after it, and each reference
// to one, #/components/schemas/X, the absolute <name>#/definitions/X.
function absolute(name, value) {
  if (Array.isArray(value)) return value.map((v) => absolute(name, v));
  if (value === null || typeof value !== "object") return value;
  const out = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] = k === "$ref" && typeof v === "string" ? v.replace("#/components/schemas/", `${name}#/definitions/`) : absolute(name, v);
  }
  return out;
}

const docs = {};
for (const arg of process.argv.slice(2)) {
  const [name, path] = arg.split("=");
  const doc = absolute(name, JSON.parse(readFileSync(path, "utf8")));
  docs[name] = doc;
  ajv.addSchema({ $id: name, definitions: doc.components.schemas });
}

// refused lists the schemas of the documents that Ajv in strict mode does not compile.
function refusedSchemas() {
  const out = [];
  const compile = (where, schema) => {
    try {
      if (schema) ajv.compile(schema);
    } catch (err) {
      out.push(`${where}: ${err.message}`.replaceAll("\n", " "));
    }
  };
  for (const [name, doc] of Object.entries(docs)) {
    for (const schema of Object.keys(doc.components.schemas)) compile(`${name} ${schema}`, { $ref: `${name}#/definitions/${schema}` });
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        for (const p of [...(item.parameters ?? []), ...(op.parameters ?? [])]) compile(`${name} ${path} ${p.name ?? p.$ref}`, p.schema);
        for (const media of Object.values(op.requestBody?.content ?? {})) compile(`${name} ${method} ${path} body`, media.schema);
        for (const [status, r] of Object.entries(op.responses ?? {})) {
          for (const media of Object.values(r.content ?? {})) compile(`${name} ${method} ${path} ${status}`, media.schema);
        }
      }
    }
  }
  return out;
}
const refused = refusedSchemas();

const validators = new Map();

// validator compiles, once, the schema of the answer with this status to this operation.
function validator(name, path, method, status) {
  const key = [name, path, method, status].join(" ");
  if (!validators.has(key)) {
    const doc = docs[name];
    const responses = doc.paths[path]?.[method]?.responses ?? {};
    let response = responses[String(status)] ?? responses.default;
    if (response?.$ref) response = doc.components.responses[response.$ref.replace("#/components/responses/", "")];
    const schema = response?.content?.["application/json"]?.schema;
    validators.set(key, schema ? ajv.compile(schema) : null);
  }
  return validators.get(key);
}

const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  let verdict = "ok";
  try {
    const a = JSON.parse(line);
    const v = refused.length > 0 ? null : validator(a.doc, a.path, a.method, a.status);
    if (refused.length > 0) verdict = `Ajv in strict mode refuses these schemas: ${refused.join("; ")}`;
    else if (v === null) verdict = `no JSON schema for ${a.method} ${a.path} ${a.status}`;
    else if (!v(a.body)) verdict = ajv.errorsText(v.errors, { separator: "; " });
  } catch (err) {
    verdict = `ajv: ${err.message}`.replaceAll("\n", " ");
  }
  process.stdout.write(verdict + "\n");
}
