/** Token amounts: decimal strings of base units to and from what people type and read. */

/** "1500000000000000000" with 18 decimals → "1.5". */
export function formatUnits(value: string, decimals: number): string {
  const negative = value.startsWith("-");
  const digits = (negative ? value.slice(1) : value).replace(/^0+(?=\d)/, "");
  const padded = digits.padStart(decimals + 1, "0");
  const whole = padded.slice(0, padded.length - decimals);
  const fraction = padded.slice(padded.length - decimals).replace(/0+$/, "");
  return `${negative ? "-" : ""}${whole}${fraction ? `.${fraction}` : ""}`;
}

/** "1.5" with 18 decimals → "1500000000000000000"; null when it is not such an amount. */
export function parseUnits(text: string, decimals: number): string | null {
  const value = text.trim().replace(/,/g, "");
  const m = /^(\d*)(?:\.(\d*))?$/.exec(value);
  if (!m || (!m[1] && !m[2])) return null;
  const fraction = m[2] ?? "";
  if (fraction.length > decimals) return null;
  const base = BigInt((m[1] || "0") + fraction.padEnd(decimals, "0"));
  return base.toString();
}

/** A readable amount: grouped, at most `max` decimals shown (rounded down). */
export function displayAmount(value: string, decimals: number, max = 6): string {
  const exact = formatUnits(value, decimals);
  const [whole, fraction = ""] = exact.split(".");
  const shown = fraction.slice(0, max).replace(/0+$/, "");
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  return shown ? `${grouped}.${shown}` : grouped;
}
