/**
 * Links and formatting in messages (web/app/pages/chat/rich-text.ts), with hostile messages: the
 * rendered tree holds text children only (no HTML is ever parsed), links are http(s) only with
 * rel="noopener noreferrer".
 */
import assert from "node:assert/strict";
import type { VNode } from "preact";
import { test } from "../support/helpers.ts";
import { RichText, segments } from "../../web/app/pages/chat/rich-text.ts";

/** The rendered tree as a small HTML-like string, every text escaped; fails on raw HTML props. */
function serialize(node: unknown): string {
  if (node === null || node === undefined || node === false) return "";
  if (typeof node === "string" || typeof node === "number") {
    return String(node).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  }
  if (Array.isArray(node)) return node.map(serialize).join("");
  const v = node as VNode<Record<string, unknown>>;
  assert.equal(typeof v.type, "string", "elements only");
  const { children, key: _key, ...props } = v.props as Record<string, unknown>;
  assert.ok(!("dangerouslySetInnerHTML" in props), "never raw HTML");
  for (const name of Object.keys(props)) assert.ok(!/^on/i.test(name), `no handler ${name}`);
  const attrs = Object.entries(props).map(([k, value]) => ` ${k}="${value}"`).join("");
  return `<${v.type}${attrs}>${serialize(children)}</${v.type}>`;
}

const html = (text: string) => serialize(RichText({ text }));

test("[web] rich text: a hostile message stays text (tags, handlers, entities, javascript: links)", () => {
  const hostile = `<img src=x onerror="alert(1)"> <script>alert(2)</script> &lt;b&gt; ` +
    `javascript:alert(3) [x](javascript:alert(4)) data:text/html,<b>hi</b>`;
  assert.equal(
    html(hostile),
    `<span class="rich-text">&lt;img src=x onerror="alert(1)"&gt; &lt;script&gt;alert(2)&lt;/script&gt; ` +
      `&amp;lt;b&amp;gt; javascript:alert(3) [x](javascript:alert(4)) data:text/html,&lt;b&gt;hi&lt;/b&gt;</span>`,
  );
  // A URL with markup glued to it: the link ends before the markup, which stays text.
  assert.equal(
    html(`see https://example.com/a"><script>alert(5)</script>`),
    `<span class="rich-text">see <a href="https://example.com/a" target="_blank" rel="noopener noreferrer">https://example.com/a</a>"&gt;&lt;script&gt;alert(5)&lt;/script&gt;</span>`,
  );
});

test("[web] rich text: http(s) URLs become links (trailing punctuation and unopened parentheses left out), *bold*, _italic_, `code`", () => {
  assert.equal(
    html("Read https://example.com/docs?q=1&x=2. Or (see http://a.test/wiki/Foo_(bar)), *now*"),
    `<span class="rich-text">Read <a href="https://example.com/docs?q=1&x=2" target="_blank" rel="noopener noreferrer">https://example.com/docs?q=1&amp;x=2</a>. ` +
      `Or (see <a href="http://a.test/wiki/Foo_(bar)" target="_blank" rel="noopener noreferrer">http://a.test/wiki/Foo_(bar)</a>), <strong>now</strong></span>`,
  );
  assert.equal(
    html("*bold _and italic_* and _italic_ but snake_case_name and `*not* <b>bold</b>`"),
    `<span class="rich-text"><strong>bold <em>and italic</em></strong> and <em>italic</em> but snake_case_name and <code>*not* &lt;b&gt;bold&lt;/b&gt;</code></span>`,
  );
  assert.deepEqual(segments("no markup at all * _ `"), [
    { kind: "text", text: "no markup at all * _ `" },
  ]);
  assert.deepEqual(segments(""), []);
});
