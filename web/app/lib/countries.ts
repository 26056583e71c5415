/**
 * Countries for addresses: the ISO 3166-1 alpha-2 codes (what the API stores, `shipping.address
 * .country`), named in the reader's language by `Intl.DisplayNames` (no list of names shipped).
 * The codes are the standard's 249 officially assigned ones; `Intl` is only asked for names, since
 * it also names regions that are not countries (EU, UN, 419…).
 */
const CODES = (
  "AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR " +
  "BS BT BV BW BY BZ CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ " +
  "EC EE EG EH ER ES ET FI FJ FK FM FO FR GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW " +
  "GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE JM JO JP KE KG KH KI KM KN KP KR KW KY " +
  "KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV " +
  "MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY " +
  "QA RE RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF TG " +
  "TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG UM US UY UZ VA VC VE VG VI VN VU WF WS YE YT ZA ZM " +
  "ZW"
).split(" ");

let names: Intl.DisplayNames | null = null;

/** The country's name in the reader's language ("United Kingdom" for GB), or the code itself. */
export function countryName(code: string): string {
  try {
    names ??= new Intl.DisplayNames([navigator.language, "en"], { type: "region" });
    return names.of(code.toUpperCase()) ?? code;
  } catch {
    return code;
  }
}

let sorted: { code: string; name: string }[] | null = null;

/** Every country, by name in the reader's language. */
export function countries(): { code: string; name: string }[] {
  sorted ??= CODES.map((code) => ({ code, name: countryName(code) }))
    .sort((a, b) => a.name.localeCompare(b.name, navigator.language));
  return sorted;
}

/** The reader's own country, guessed from the browser's language (en-GB: GB), if any. */
export function likelyCountry(): string {
  try {
    const region = new Intl.Locale(navigator.language).maximize().region ?? "";
    return CODES.includes(region) ? region : "";
  } catch {
    return "";
  }
}
