/**
 * The country picker of every form that asks for a country (the shipping address, the shop's
 * application): the ISO 3166-1 alpha-2 countries named in the reader's language, the code as the
 * value (what the API stores).
 */
import { countries } from "../lib/countries.ts";

interface Props {
  id: string;
  value: string;
  onChange: (code: string) => void;
  "aria-invalid"?: "true";
  "aria-describedby"?: string;
}

export function CountrySelect({ id, value, onChange, ...aria }: Props) {
  return (
    <select
      id={id}
      autocomplete="country"
      aria-required="true"
      {...aria}
      value={value}
      onChange={(e) => onChange(e.currentTarget.value)}
    >
      <option value="">Choose a country</option>
      {countries().map((c) => <option key={c.code} value={c.code}>{c.name}</option>)}
    </select>
  );
}
