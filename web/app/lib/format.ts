/** Dates, times and sizes for people. */

const time = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit" });
const day = new Intl.DateTimeFormat(undefined, { month: "short", day: "numeric" });
const full = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });

export function shortTime(iso: string): string {
  const d = new Date(iso);
  const today = new Date();
  return d.toDateString() === today.toDateString() ? time.format(d) : day.format(d);
}

export function clockTime(iso: string): string {
  return time.format(new Date(iso));
}

export function fullTime(iso: string | null | undefined): string {
  return iso ? full.format(new Date(iso)) : "—";
}

export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

export function dayLabel(iso: string): string {
  return new Date(iso).toLocaleDateString(undefined, {
    weekday: "long",
    month: "long",
    day: "numeric",
  });
}

export interface Money {
  amount: number;
  currency: string;
}

const moneyFormats = new Map<string, Intl.NumberFormat>();

function moneyFormat(currency: string): Intl.NumberFormat {
  let format = moneyFormats.get(currency);
  if (!format) {
    format = new Intl.NumberFormat(undefined, { style: "currency", currency });
    moneyFormats.set(currency, format);
  }
  return format;
}

/** The minor units of a currency (2 for USD, 0 for JPY). */
export function minorDigits(currency: string): number {
  return moneyFormat(currency).resolvedOptions().maximumFractionDigits ?? 2;
}

/** `{ amount: 4500, currency: "USD" }` as "$45.00" (amounts are integer minor units). */
export function money(m: Money | null | undefined): string {
  if (!m) return "—";
  return moneyFormat(m.currency).format(m.amount / 10 ** minorDigits(m.currency));
}

/** "12.50" in a currency's major units to minor units (null when it is not a number). */
export function toMinor(text: string, currency: string): number | null {
  const value = text.trim().replace(/,/g, "");
  if (!/^\d+(\.\d+)?$/.test(value)) return null;
  const digits = minorDigits(currency);
  const [whole, fraction = ""] = value.split(".");
  if (fraction.length > digits) return null;
  return Number(whole) * 10 ** digits + Number(fraction.padEnd(digits, "0") || "0");
}

/** A long hex string shortened in the middle: 0x1234…abcd. */
export function shortHex(value: string | null | undefined, keep = 6): string {
  if (!value) return "—";
  return value.length <= keep * 2 + 3 ? value : `${value.slice(0, keep)}…${value.slice(-4)}`;
}
