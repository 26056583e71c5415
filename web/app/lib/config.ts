/**
 * The public configuration (GET /api/config/public): white-label, feature flags, where Realtime
 * is. The white-label is applied to the whole page here: the brand name in the title and header,
 * the logo, and the primary colour as CSS custom properties, adjusted so text on it and links in
 * it keep a readable contrast whatever colour an admin picks.
 */
import { type Answer, client, data, FRESH } from "./client.ts";
import { createStore } from "./store.ts";

/** GET /api/config/public's answer. */
export type PublicConfig = Answer<"/api/config/public", "get">;
export type WhiteLabel = PublicConfig["whiteLabel"];
export type Features = PublicConfig["features"];

export const config = createStore<PublicConfig | null>(null);

/** Reads the public configuration (`fresh` skips the 30 s HTTP cache) and applies it. */
export async function loadConfig(fresh = false): Promise<PublicConfig> {
  const next = data(await client.GET("/api/config/public", fresh ? FRESH : {}));
  const current = config.get();
  if (!current || JSON.stringify(current) !== JSON.stringify(next)) {
    config.set(next);
    applyWhiteLabel(next.whiteLabel);
  }
  return next;
}

/**
 * The project URL supabase-js takes (`createClient(url, anonKey)`). The contract says
 * `realtime.url` is that URL; a server that names the socket endpoint instead
 * (`ws://host/realtime/v1`) is understood too.
 */
export function realtimeProjectUrl(cfg: PublicConfig): string {
  const url = new URL(cfg.realtime.url || location.origin, location.href);
  if (url.protocol === "ws:") url.protocol = "http:";
  if (url.protocol === "wss:") url.protocol = "https:";
  url.pathname = url.pathname.replace(/\/realtime\/v1\/?$/, "").replace(/\/$/, "");
  return url.toString().replace(/\/$/, "");
}

// Colours -------------------------------------------------------------------------------------

function channel(v: number): number {
  const s = v / 255;
  return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
}

function rgb(hex: string): [number, number, number] {
  const m = /^#?([0-9a-f]{6})$/i.exec(hex.trim());
  const n = parseInt(m ? m[1] : "1f6feb", 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}

function toHex([r, g, b]: number[]): string {
  return "#" + [r, g, b].map((v) => Math.round(v).toString(16).padStart(2, "0")).join("");
}

function luminance(hex: string): number {
  const [r, g, b] = rgb(hex);
  return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b);
}

/** WCAG contrast ratio of two colours. */
export function contrast(a: string, b: string): number {
  const [l1, l2] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (l1 + 0.05) / (l2 + 0.05);
}

/** Mixes towards black until the colour reads on white at `ratio`. */
function darkenFor(hex: string, background: string, ratio: number): string {
  let colour = rgb(hex);
  for (let i = 0; i < 40 && contrast(toHex(colour), background) < ratio; i++) {
    colour = colour.map((v) => v * 0.92) as [number, number, number];
  }
  return toHex(colour);
}

export interface BrandColours {
  /** The primary colour, as configured (buttons, the header bar). */
  brand: string;
  /** Text on the brand colour: black or white, whichever contrasts more. */
  onBrand: string;
  /** The brand colour as text on white or on the tint, darkened until it reads (4.5:1). */
  brandText: string;
  /** A light tint for selected rows and own messages. */
  brandTint: string;
}

export function brandColours(primary: string): BrandColours {
  const brand = toHex(rgb(primary));
  const onBrand = contrast(brand, "#ffffff") >= contrast(brand, "#000000") ? "#ffffff" : "#000000";
  const [r, g, b] = rgb(brand);
  const brandTint = toHex([r, g, b].map((v) => 255 - (255 - v) * 0.12));
  return {
    brand,
    onBrand,
    // Readable on the tint (selected items), and so on white too.
    brandText: darkenFor(brand, brandTint, 4.6),
    brandTint,
  };
}

/** Applies a white-label to an element (the page's root, or a preview). */
export function styleFor(whiteLabel: Pick<WhiteLabel, "primaryColor">): Record<string, string> {
  const c = brandColours(whiteLabel.primaryColor);
  return {
    "--brand": c.brand,
    "--on-brand": c.onBrand,
    "--brand-text": c.brandText,
    "--brand-tint": c.brandTint,
  };
}

export function applyWhiteLabel(whiteLabel: WhiteLabel): void {
  const root = document.documentElement;
  for (const [name, value] of Object.entries(styleFor(whiteLabel))) {
    root.style.setProperty(name, value);
  }
  document.querySelector('meta[name="theme-color"]')?.setAttribute(
    "content",
    brandColours(whiteLabel.primaryColor).brand,
  );
}

let currentPage: string | null = null;
let unreadInTitle = 0;

/**
 * The document title: "<page> · <brand>", led by the count of unread notifications when there
 * are any ("(3) Chat · Agora"); it follows the brand and the count when they change.
 */
export function setTitle(page: string | null): void {
  const brand = config.get()?.whiteLabel.brandName ?? "Agora";
  const count = unreadInTitle > 0 ? `(${unreadInTitle}) ` : "";
  document.title = count + (page ? `${page} · ${brand}` : brand);
  currentPage = page;
}
config.subscribe(() => setTitle(currentPage));

/** The unread count the title shows (null or 0: none). */
export function setTitleCount(count: number | null): void {
  const next = count ?? 0;
  if (next === unreadInTitle) return;
  unreadInTitle = next;
  setTitle(currentPage);
}
