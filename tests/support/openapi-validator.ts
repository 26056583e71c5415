/**
 * Checks real responses against the served OpenAPI 3.1 document: the status must be documented
 * for the operation, the content type must be one it lists, and a JSON body must validate against
 * the schema given for that status (JSON Schema 2020-12, with Ajv).
 */
import { Ajv2020, type ErrorObject } from "ajv/dist/2020.js";
import formats from "ajv-formats";

type Doc = {
  paths: Record<string, Record<string, { responses?: Record<string, ResponseObject> }>>;
};
type ResponseObject = { content?: Record<string, { schema?: unknown }> };

/** JSON-pointer escaping of one path segment. */
const pointer = (segment: string) => segment.replace(/~/g, "~0").replace(/\//g, "~1");

export interface ResponseValidator {
  /**
   * Problems with `response` as the answer of `method path` (`path` as the document writes it,
   * e.g. `/api/messages/{id}`), or an empty list. Reads a clone: the body stays readable.
   */
  check(method: string, path: string, response: Response): Promise<string[]>;
}

export function responseValidator(doc: Doc): ResponseValidator {
  // strict off: the document holds OpenAPI keywords (`example`, `openapi`, ...) beside schemas.
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  // The package is CommonJS: its default export arrives wrapped.
  (formats as unknown as { default: (a: Ajv2020) => void }).default(ajv);
  ajv.addFormat("binary", true);
  ajv.addSchema(doc, "openapi.json");

  return {
    async check(method, path, response) {
      const operation = doc.paths[path]?.[method.toLowerCase()];
      if (!operation) return [`${method} ${path} is not in the document`];
      const status = String(response.status);
      const documented = operation.responses?.[status] ??
        operation.responses?.[`${status[0]}XX`] ?? operation.responses?.default;
      const where = `${method} ${path} ${status}`;
      if (!documented) return [`${where}: status not documented`];
      const type = (response.headers.get("content-type") ?? "").split(";")[0].trim().toLowerCase();
      const content = documented.content ?? {};
      if (!Object.keys(content).length) {
        const empty = !(await response.clone().arrayBuffer()).byteLength;
        return empty || response.status === 303
          ? []
          : [`${where}: a body where none is documented`];
      }
      const mediaType = Object.keys(content).find((m) =>
        m === type || m === "*/*" || (m.endsWith("/*") && type.startsWith(m.slice(0, -1)))
      );
      if (!mediaType) {
        return [
          `${where}: content type ${type || "(none)"} not documented (${Object.keys(content)})`,
        ];
      }
      if (mediaType !== "application/json") return [];
      const ref = `openapi.json#/paths/${pointer(path)}/${method.toLowerCase()}/responses/${
        Object.keys(operation.responses ?? {}).includes(status) ? status : "default"
      }/content/${pointer(mediaType)}/schema`;
      const validate = ajv.getSchema(ref);
      if (!validate) return [`${where}: no schema at ${ref}`];
      let body: unknown;
      try {
        body = await response.clone().json();
      } catch {
        return [`${where}: not JSON`];
      }
      if (validate(body)) return [];
      return (validate.errors ?? []).map((e: ErrorObject) =>
        `${where}: ${e.instancePath || "(body)"} ${e.message} ${JSON.stringify(e.params)}`
      );
    },
  };
}
