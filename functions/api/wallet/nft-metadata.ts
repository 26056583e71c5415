/**
 * NFT metadata from a token URI. `data:` URIs holding JSON (base64 or percent-encoded) are decoded
 * here: the demo collections and many on-chain collections use them. Other URIs (https, ipfs)
 * are kept as `tokenUri` for clients to fetch: the server never fetches a URL a contract names
 * (no outbound requests to addresses an outsider chose).
 */

export interface NftMetadata {
  name: string | null;
  image: string | null;
}

/** Longest image kept (an inline SVG is a few KB; a data: URI photo is not worth storing). */
const MAX_IMAGE = 65_536;
const MAX_NAME = 200;

function decodeBase64Utf8(text: string): string {
  const binary = atob(text);
  return new TextDecoder().decode(Uint8Array.from(binary, (c) => c.charCodeAt(0)));
}

/** The JSON document inside a `data:application/json` URI, or null for any other URI. */
export function jsonFromDataUri(uri: string): unknown {
  const match = /^data:application\/json(;charset=[\w-]+)?(;utf8)?(;base64)?,(.*)$/is.exec(uri);
  if (!match) return null;
  try {
    const body = match[3] ? decodeBase64Utf8(match[4]) : decodeURIComponent(match[4]);
    return JSON.parse(body);
  } catch {
    return null;
  }
}

/** Name and image of a token from its URI (nulls when it cannot be read here). */
export function metadataFromUri(uri: string | null): NftMetadata {
  if (!uri) return { name: null, image: null };
  const doc = jsonFromDataUri(uri) as { name?: unknown; image?: unknown } | null;
  if (!doc || typeof doc !== "object") return { name: null, image: null };
  const name = typeof doc.name === "string" ? doc.name.slice(0, MAX_NAME) : null;
  const image = typeof doc.image === "string" && doc.image.length <= MAX_IMAGE ? doc.image : null;
  return { name, image };
}

/** An ERC-1155 URI with its `{id}` template filled in (64 lowercase hex digits, EIP-1155). */
export function erc1155Uri(template: string, tokenId: bigint): string {
  return template.replaceAll("{id}", tokenId.toString(16).padStart(64, "0"));
}
