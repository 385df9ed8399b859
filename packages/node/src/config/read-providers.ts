/**
 * The `providers:` section (provider API base URLs, without the API version, and Runpod's pod proxy
 * URL template, overridable so the emulators can stand in) and the `tls:` section (one extra CA for outbound HTTPS; verification itself
 * cannot be turned off, so there is no key for it).
 * Must not know: YAML, provider wire formats, TLS itself (the CA file is not read here).
 */

import type { ConfigHost, ProviderApis, TlsSettings } from "./config-types.js";
import { PROVIDER_DEFAULTS } from "./defaults.js";
import type { Section } from "./field-reader.js";
import { parseOutboundUrl } from "./net-address.js";

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

const PLACEHOLDERS = ["{pod_id}", "{port}"] as const;

/**
 * A pod proxy URL template: both placeholders, no other `{…}`, and once they are filled in, a URL
 * the provider API URLs' rules accept (https, or http only to loopback; no credentials, query or fragment).
 */
function proxyUrlTemplate(section: Section, key: string, fallback: string): string {
  const template = section.string(key);
  if (template === undefined) return fallback;
  const missing = PLACEHOLDERS.filter((p) => !template.includes(p));
  if (missing.length > 0) {
    section.report(
      key,
      "invalid_value",
      `the template needs ${missing.join(" and ")}: e.g. ${PROVIDER_DEFAULTS.runpod_proxy_url}`,
    );
    return fallback;
  }
  const sample = template.replaceAll("{pod_id}", "abc123").replaceAll("{port}", "8000");
  if (/[{}]/.test(sample)) {
    section.report(key, "invalid_value", "only {pod_id} and {port} may be used as placeholders");
    return fallback;
  }
  const parsed = parseOutboundUrl(sample);
  if (!parsed.ok) {
    section.report(key, parsed.code, parsed.message);
    return fallback;
  }
  return template.replace(/\/+$/, "");
}

export function readProviders(top: Section): ProviderApis {
  const providers = top.section("providers", PROVIDERS_KEYS);
  const huggingface = providers.section("huggingface", ["endpoints_api", "hub_api", "catalog_api"]);
  const runpod = providers.section("runpod", ["api", "proxy_url"]);
  return {
    huggingface: {
      endpointsApi: apiUrl(huggingface, "endpoints_api", PROVIDER_DEFAULTS.huggingface_endpoints_api),
      hubApi: apiUrl(huggingface, "hub_api", PROVIDER_DEFAULTS.huggingface_hub_api),
      catalogApi: apiUrl(huggingface, "catalog_api", PROVIDER_DEFAULTS.huggingface_catalog_api),
    },
    runpod: {
      api: apiUrl(runpod, "api", PROVIDER_DEFAULTS.runpod_api),
      proxyUrl: proxyUrlTemplate(runpod, "proxy_url", PROVIDER_DEFAULTS.runpod_proxy_url),
    },
  };
}

export function readTls(top: Section, host: ConfigHost): TlsSettings {
  const tls = top.section("tls", TLS_KEYS);
  return { extraCaFile: tls.filePath("extra_ca_file", host.homeDir) ?? null };
}
