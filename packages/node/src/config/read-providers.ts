/**
 * The `providers:` section (provider API base URLs, without the API version, overridable so the
 * emulators can stand in) and the `tls:` section (one extra CA for outbound HTTPS; verification itself
 * cannot be turned off, so there is no key for it).
 * Must not know: YAML, provider wire formats, TLS itself (the CA file is not read here).
 */

import type { ConfigHost, ProviderApis, TlsSettings } from "./config-types.js";
import { PROVIDER_DEFAULTS } from "./defaults.js";
import type { Section } from "./field-reader.js";

export const PROVIDERS_KEYS = ["huggingface", "runpod"] as const;
export const TLS_KEYS = ["extra_ca_file"] as const;

const VERSIONED = /\/v[0-9]+$/;

/** A provider API base URL; a trailing version (`/v2`) is refused, since PAIR appends it. */
function apiUrl(section: Section, key: string, fallback: string): string {
  const url = section.url(key);
  if (url === undefined) return fallback;
  if (VERSIONED.test(new URL(url).pathname.replace(/\/+$/, ""))) {
    section.report(key, "invalid_value", "give the API base URL without the version: PAIR appends it");
    return fallback;
  }
  return url;
}

export function readProviders(top: Section): ProviderApis {
  const providers = top.section("providers", PROVIDERS_KEYS);
  const huggingface = providers.section("huggingface", ["endpoints_api", "hub_api", "catalog_api"]);
  const runpod = providers.section("runpod", ["api"]);
  return {
    huggingface: {
      endpointsApi: apiUrl(huggingface, "endpoints_api", PROVIDER_DEFAULTS.huggingface_endpoints_api),
      hubApi: apiUrl(huggingface, "hub_api", PROVIDER_DEFAULTS.huggingface_hub_api),
      catalogApi: apiUrl(huggingface, "catalog_api", PROVIDER_DEFAULTS.huggingface_catalog_api),
    },
    runpod: { api: apiUrl(runpod, "api", PROVIDER_DEFAULTS.runpod_api) },
  };
}

export function readTls(top: Section, host: ConfigHost): TlsSettings {
  const tls = top.section("tls", TLS_KEYS);
  return { extraCaFile: tls.filePath("extra_ca_file", host.homeDir) ?? null };
}
