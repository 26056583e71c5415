/**
 * A message's text with links and basic formatting, safely: the text is cut into segments (plain
 * text, links, `code`, *bold*, _italic_) that the page renders as elements with text children,
 * never as HTML, so whatever a message holds (`<script>`, `<img onerror>`, entities) shows as the
 * characters it is. Links: http(s) URLs only (parsed by `URL`; `javascript:` and the rest stay
 * text), opened in a new tab with rel="noopener noreferrer". Inside `code` and links nothing is
 * formatted; `_` inside words (snake_case) is not italic.
 */
import { type ComponentChild, h } from "preact";

export type Segment =
  | { kind: "text"; text: string }
  | { kind: "link"; text: string; href: string }
  | { kind: "code"; text: string }
  | { kind: "bold"; children: Segment[] }
  | { kind: "italic"; children: Segment[] };

const CODE = /`([^`\n]+)`/g;
const URL_LIKE = /\bhttps?:\/\/[^\s<>"'`]+/gi;
const BOLD = /\*(?=\S)([^*\n]*?\S)\*/g;
const ITALIC = /(^|[^\p{L}\p{N}_])_(?=\S)([^_\n]*?\S)_(?![\p{L}\p{N}_])/gu;

/** Cuts `text` at the matches of `re`, the matches becoming what `make` returns. */
function cut(
  text: string,
  re: RegExp,
  make: (match: RegExpExecArray) => { before?: string; segment: Segment | null; raw: string },
  rest: (text: string) => Segment[],
): Segment[] {
  const out: Segment[] = [];
  let at = 0;
  re.lastIndex = 0;
  for (let match = re.exec(text); match; match = re.exec(text)) {
    const { before = "", segment, raw } = make(match);
    const start = match.index + before.length;
    if (!segment) continue;
    out.push(...rest(text.slice(at, start)), segment);
    at = start + raw.length;
    re.lastIndex = at;
  }
  out.push(...rest(text.slice(at)));
  return out;
}

function plain(text: string): Segment[] {
  return text ? [{ kind: "text", text }] : [];
}

function italics(text: string): Segment[] {
  return cut(text, ITALIC, (m) => ({
    before: m[1],
    raw: `_${m[2]}_`,
    segment: { kind: "italic", children: plain(m[2]) },
  }), plain);
}

function emphasis(text: string): Segment[] {
  return cut(text, BOLD, (m) => ({
    raw: m[0],
    segment: { kind: "bold", children: italics(m[1]) },
  }), italics);
}

/** The URL a link goes to, or null: http(s) only, trailing punctuation left out of it. */
function link(raw: string): { text: string; href: string } | null {
  let text = raw.replace(/[.,;:!?]+$/, "");
  // A closing parenthesis belongs to the URL only when it opened one.
  while (
    text.endsWith(")") && (text.match(/\(/g)?.length ?? 0) < (text.match(/\)/g)?.length ?? 0)
  ) {
    text = text.slice(0, -1).replace(/[.,;:!?]+$/, "");
  }
  try {
    const url = new URL(text);
    if (url.protocol !== "http:" && url.protocol !== "https:") return null;
    return { text, href: url.href };
  } catch {
    return null;
  }
}

function links(text: string): Segment[] {
  return cut(text, URL_LIKE, (m) => {
    const found = link(m[0]);
    return {
      raw: found?.text ?? m[0],
      segment: found ? { kind: "link", ...found } : null,
    };
  }, emphasis);
}

export function segments(text: string): Segment[] {
  return cut(text, CODE, (m) => ({
    raw: m[0],
    segment: { kind: "code", text: m[1] },
  }), links);
}

/** How plain text is shown: as it is, or decorated (the chat page highlights mentions in it). */
type Plain = (text: string) => ComponentChild;

function render(segment: Segment, key: number, plain: Plain): ComponentChild {
  const inner = (children: Segment[]) => children.map((c, i) => render(c, i, plain));
  switch (segment.kind) {
    case "text":
      return plain(segment.text);
    case "link":
      return h("a", {
        key,
        href: segment.href,
        target: "_blank",
        rel: "noopener noreferrer",
      }, segment.text);
    case "code":
      return h("code", { key }, segment.text);
    case "bold":
      return h("strong", { key }, inner(segment.children));
    case "italic":
      return h("em", { key }, inner(segment.children));
  }
}

/**
 * The message's text as elements (text children only: no HTML is ever parsed). `plain` shows the
 * plain-text pieces (outside links and code), e.g. with mentions highlighted.
 */
export function RichText({ text, plain = (t) => t }: { text: string; plain?: Plain }) {
  return h("span", { class: "rich-text" }, segments(text).map((s, i) => render(s, i, plain)));
}
