import type { SearchQuery } from "./types.js";

/** `user_location.country` as an upper-case ISO 3166-1 alpha-2 code, or undefined when it is not one. */
export function countryCode(q: SearchQuery): string | undefined {
  const c = q.userLocation?.country?.trim().toUpperCase();
  return c && /^[A-Z]{2}$/.test(c) ? c : undefined;
}

/**
 * SearXNG's `language` for a country: its main locale, among those SearXNG knows
 * (searx/sxng_locales.py). A country not listed sends no language (SearXNG refuses unknown ones).
 */
const SEARXNG_LOCALE: Record<string, string> = {
  AR: "es-AR", AT: "de-AT", AU: "en-AU", BE: "nl-BE", BG: "bg-BG", BR: "pt-BR", CA: "en-CA", CH: "de-CH", CL: "es-CL",
  CN: "zh-CN", CZ: "cs-CZ", DE: "de-DE", DK: "da-DK", EE: "et-EE", ES: "es-ES", FI: "fi-FI", FR: "fr-FR", GB: "en-GB",
  GR: "el-GR", HK: "zh-HK", HU: "hu-HU", ID: "id-ID", IE: "en-IE", IN: "en-IN", IT: "it-IT", JP: "ja-JP", KR: "ko-KR",
  MX: "es-MX", MY: "en-MY", NL: "nl-NL", NO: "nb-NO", NZ: "en-NZ", PH: "en-PH", PL: "pl-PL", PT: "pt-PT", RO: "ro-RO",
  RU: "ru-RU", SE: "sv-SE", SI: "sl-SI", SK: "sk-SK", TH: "th-TH", TR: "tr-TR", TW: "zh-TW", UA: "uk-UA", US: "en-US",
  VN: "vi-VN", ZA: "en-ZA",
};

export function searxngLanguage(q: SearchQuery): string | undefined {
  const c = countryCode(q);
  return c ? SEARXNG_LOCALE[c] : undefined;
}

/** The countries Brave's `country` parameter accepts (its API answers 422 to others). */
const BRAVE_COUNTRIES = new Set(
  "AR AU AT BE BR CA CL DK FI FR DE HK IN ID IT JP KR MY MX NL NZ NO CN PL PT PH RU SA ZA ES SE CH TW TR GB US".split(" "),
);

export function braveCountry(q: SearchQuery): string | undefined {
  const c = countryCode(q);
  return c && BRAVE_COUNTRIES.has(c) ? c : undefined;
}

let regionNames: Intl.DisplayNames | undefined;

/** Tavily's `country` is the country's English name in lower case ("united states"). */
export function tavilyCountry(q: SearchQuery): string | undefined {
  const c = countryCode(q);
  if (!c) return undefined;
  regionNames ??= new Intl.DisplayNames(["en"], { type: "region", fallback: "none" });
  return regionNames.of(c)?.toLowerCase();
}

/** A header value a provider can take as it is: printable ASCII only (city and region names may not be). */
export function asciiHeader(value: string | undefined): string | undefined {
  const v = value?.trim();
  return v && /^[\x20-\x7e]+$/.test(v) ? v : undefined;
}
