/**
 * Request bodies generated from the OpenAPI document's JSON Schemas: a plausible sample of each
 * body, and the ways to break it, field by field (the schema says where each boundary is). Used by
 * tests/core/malformed-input.test.ts, so a new field or a new route is attacked the day it exists.
 */

// deno-lint-ignore no-explicit-any
export type Schema = Record<string, any>;

/** A body variant that must be refused (`strict`) or may be accepted (`lenient`). */
export interface Mutation {
  name: string;
  /** The raw JSON text sent: lone surrogates and numbers JSON.stringify cannot write. */
  raw: string;
  strict: boolean;
}

/**
 * Text every field that takes free text must survive: right-to-left override, a combining mark,
 * a family emoji (one grapheme, 11 UTF-16 units), zero-width space and joiner, a byte order mark,
 * mathematical letters outside the BMP, a ligature that expands under normalization, a Turkish
 * dotted capital I (its lower case is two code points), and Han and Arabic script.
 */
export const UNICODE_EDGES = [
  "\u202egnp.exe",
  "e\u0301",
  "\u{1F469}\u200D\u{1F469}\u200D\u{1F467}\u200D\u{1F466}",
  "a\u200bb\u200dc",
  "\ufeffbom",
  "\u{1D518}\u{1D52B}\u{1D526}",
  "\ufdfa",
  "\u0130stanbul",
  "\u4e2d\u6587 \u0627\u0644\u0639\u0631\u0628\u064a\u0629",
];

export function schemaTools(doc: { components?: { schemas?: Record<string, Schema> } }) {
  const deref = (schema: Schema): Schema => {
    let current = schema ?? {};
    for (let i = 0; i < 10 && typeof current.$ref === "string"; i++) {
      current = doc.components?.schemas?.[current.$ref.replace("#/components/schemas/", "")] ?? {};
    }
    return current;
  };

  /** The schema's alternatives (oneOf, anyOf), or the schema itself; `null` alternatives last. */
  const variants = (schema: Schema): Schema[] => {
    const s = deref(schema);
    const alternatives = (s.oneOf ?? s.anyOf) as Schema[] | undefined;
    if (!alternatives) return [s];
    return alternatives.map(deref).sort((a, b) =>
      Number(a.type === "null") - Number(b.type === "null")
    );
  };

  const typeOf = (s: Schema): string | undefined =>
    Array.isArray(s.type) ? s.type.find((t: string) => t !== "null") : s.type;

  /** A value the schema accepts, as far as its keywords say (ids are random: they name nothing). */
  function sample(schema: Schema, depth = 0): unknown {
    const s = variants(schema)[0];
    if ("const" in s) return s.const;
    if (s.enum) return s.enum[0];
    if (s.example !== undefined) return s.example;
    if (s.default !== undefined) return s.default;
    if (s.allOf) {
      return Object.assign({}, ...s.allOf.map((part: Schema) => sample(part, depth + 1)));
    }
    switch (typeOf(s)) {
      case "object": {
        const out: Record<string, unknown> = {};
        if (depth > 4) return out;
        for (const name of (s.required ?? []) as string[]) {
          out[name] = sample(s.properties?.[name] ?? {}, depth + 1);
        }
        return out;
      }
      case "array":
        return Array.from(
          { length: Math.max(s.minItems ?? 1, 1) },
          () => sample(s.items ?? {}, depth + 1),
        );
      case "integer":
      case "number":
        return s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + 1 : 1);
      case "boolean":
        return true;
      case "null":
        return null;
      case "string":
        return sampleString(s);
      default:
        return "x";
    }
  }

  function sampleString(s: Schema): string {
    switch (s.format) {
      case "uuid":
        return crypto.randomUUID();
      case "email":
        return `sample-${crypto.randomUUID().slice(0, 8)}@test.example`;
      case "date-time":
        return new Date().toISOString();
      case "date":
        return new Date().toISOString().slice(0, 10);
      case "uri":
      case "url":
        return "https://example.test/sample";
    }
    const length = Math.min(Math.max(s.minLength ?? 1, 1), s.maxLength ?? Infinity);
    return "x".repeat(length);
  }

  /** What breaks a value of `schema` (each must be refused), by its type and keywords. */
  function breakers(schema: Schema): [name: string, raw: string][] {
    const s = variants(schema)[0];
    const type = typeOf(s);
    const out: [string, string][] = [];
    const nullable = variants(schema).some((v) => v.type === "null") ||
      (Array.isArray(s.type) && s.type.includes("null"));
    if (!nullable) out.push(["null", "null"]);
    if (s.enum || "const" in s) out.push(["unknown value", JSON.stringify("NOT_A_VALUE")]);
    switch (type) {
      case "string":
        out.push(["a number for text", "12345"]);
        if (!s.enum && !("const" in s)) {
          out.push(["NUL", JSON.stringify(`a${"\u0000"}b`)]);
          // A lone surrogate: JSON allows the escape, UTF-8 and Postgres cannot hold it.
          out.push(["lone surrogate", '"x \\ud800"']);
          out.push(["reversed surrogates", '"\\udc00\\ud800"']);
        }
        if (s.maxLength !== undefined) {
          out.push([`${s.maxLength + 1} characters`, JSON.stringify("y".repeat(s.maxLength + 1))]);
        }
        if ((s.minLength ?? 0) > 0) {
          out.push([`${s.minLength - 1} characters`, JSON.stringify("y".repeat(s.minLength - 1))]);
        }
        if (s.format || s.pattern) out.push(["not its format", JSON.stringify("not valid here")]);
        break;
      case "integer":
      case "number":
        out.push(["text for a number", '"12"']);
        if (s.minimum !== undefined) out.push([`${s.minimum - 1}`, String(s.minimum - 1)]);
        if (s.exclusiveMinimum !== undefined) {
          out.push([`${s.exclusiveMinimum}`, String(s.exclusiveMinimum)]);
        }
        if (s.maximum !== undefined) out.push([`${s.maximum + 1}`, String(s.maximum + 1)]);
        if (type === "integer") out.push(["a fraction", "1.5"]);
        out.push(["1e400 (Infinity once parsed)", "1e400"]);
        break;
      case "boolean":
        out.push(["text for a boolean", '"true"']);
        break;
      case "array":
        out.push(["an object for a list", "{}"]);
        if (s.maxItems !== undefined) {
          const item = JSON.stringify(sample(s.items ?? {}));
          out.push([
            `${s.maxItems + 1} items`,
            `[${Array.from({ length: s.maxItems + 1 }, () => item).join(",")}]`,
          ]);
        }
        if ((s.minItems ?? 0) > 0) out.push(["no items", "[]"]);
        break;
      case "object":
        out.push(["a list for an object", "[]"]);
        break;
    }
    return out;
  }

  /**
   * The body with one field broken at a time (at any depth of nested objects), a required field
   * left out, and text fields given Unicode edge cases (lenient: they may be accepted).
   */
  function mutations(schema: Schema): Mutation[] {
    const base = sample(schema) as Record<string, unknown>;
    const out: Mutation[] = [];
    // `body` is the sample with every object on the way to the field present (an optional
    // parent is sampled too), so breaking the field is the only thing wrong with it.
    const visit = (s: Schema, path: string[], body: unknown, depth: number) => {
      const object = variants(s)[0];
      if (typeOf(object) !== "object" || depth > 3) return;
      for (const [name, property] of Object.entries((object.properties ?? {}) as Schema)) {
        const at = [...path, name];
        const label = at.join(".");
        const withValue = (raw: string) => replaceAt(body, at, raw);
        if ((object.required ?? []).includes(name)) {
          out.push({ name: `${label} missing`, raw: withoutAt(body, at), strict: true });
        }
        for (const [what, raw] of breakers(property)) {
          out.push({ name: `${label}: ${what}`, raw: withValue(raw), strict: true });
        }
        const p = variants(property)[0];
        if (typeOf(p) === "string" && !p.enum && !("const" in p) && !p.format && !p.pattern) {
          for (const text of UNICODE_EDGES) {
            out.push({
              name: `${label}: ${JSON.stringify(text)}`,
              raw: withValue(JSON.stringify(text)),
              strict: false,
            });
          }
          if (p.maxLength !== undefined && p.maxLength >= 2) {
            // Exactly the limit in UTF-16 units, in characters outside the BMP (half as many
            // code points): whatever counts the length, this is within it.
            const astral = "\u{1F600}".repeat(Math.floor(p.maxLength / 2));
            out.push({
              name: `${label}: at its limit in emoji`,
              raw: withValue(JSON.stringify(astral)),
              strict: false,
            });
          }
        }
        visit(property, at, withDefault(body, at, () => sample(property)), depth + 1);
      }
    };
    visit(schema, [], base, 0);
    if (base && typeof base === "object" && !Array.isArray(base)) {
      out.push({
        name: "an unknown extra field",
        raw: JSON.stringify({ ...base, unexpectedField: "x" }),
        strict: false,
      });
    }
    return out;
  }

  /**
   * Every text field with a `pattern` in the schema, with its `example`: samples of such a field
   * come from the example (a pattern cannot be sampled in general), and integrators read it.
   */
  function patternFields(schema: Schema): { path: string; pattern: string; example: unknown }[] {
    const out: { path: string; pattern: string; example: unknown }[] = [];
    const walk = (s: Schema, path: string, depth: number) => {
      if (!s || typeof s !== "object" || depth > 12) return;
      if (s.$ref) return walk(deref(s), path, depth + 1);
      if (s.pattern) out.push({ path, pattern: s.pattern, example: s.example });
      for (const key of ["oneOf", "anyOf", "allOf"]) {
        for (const part of (s[key] ?? []) as Schema[]) walk(part, path, depth + 1);
      }
      for (const [name, property] of Object.entries((s.properties ?? {}) as Schema)) {
        walk(property, path ? `${path}.${name}` : name, depth + 1);
      }
      if (s.items) walk(s.items, `${path}[]`, depth + 1);
    };
    walk(schema, "", 0);
    return out;
  }

  return { deref, sample, mutations, patternFields };
}

/** `base` as JSON with the value at `path` replaced by the raw JSON text `raw` (parents made). */
function replaceAt(base: unknown, path: string[], raw: string): string {
  const marker = `__RAW_${crypto.randomUUID()}__`;
  const copy = structuredClone(base ?? {}) as Record<string, unknown>;
  let node = copy;
  for (const key of path.slice(0, -1)) {
    if (node[key] === null || typeof node[key] !== "object" || Array.isArray(node[key])) {
      node[key] = {};
    }
    node = node[key] as Record<string, unknown>;
  }
  node[path[path.length - 1]] = marker;
  return JSON.stringify(copy).replace(JSON.stringify(marker), raw);
}

/** A copy of `base` with a value at `path` (made by `make`) where there was none. */
function withDefault(base: unknown, path: string[], make: () => unknown): unknown {
  const copy = structuredClone(base ?? {}) as Record<string, unknown>;
  let node = copy;
  for (const key of path.slice(0, -1)) {
    if (node[key] === null || typeof node[key] !== "object") return copy;
    node = node[key] as Record<string, unknown>;
  }
  const last = path[path.length - 1];
  if (node[last] === undefined) node[last] = make();
  return copy;
}

function withoutAt(base: unknown, path: string[]): string {
  const copy = structuredClone(base ?? {}) as Record<string, unknown>;
  let node: Record<string, unknown> | undefined = copy;
  for (const key of path.slice(0, -1)) node = node?.[key] as Record<string, unknown> | undefined;
  if (node && typeof node === "object") delete node[path[path.length - 1]];
  return JSON.stringify(copy);
}
