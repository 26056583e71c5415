/**
 * Which sign-in providers are on. A provider is enabled when its settings are present (Google:
 * client id and secret; Apple: client id, team id, key id and key; e-mail and wallets need none)
 * and the configuration's `features.signIn.<provider>` is not false (default true). A request for
 * a provider that is off is 400 `provider_disabled`.
 */
import { ApiError } from "../../_shared/errors.ts";
import type { Deps } from "../core/context.ts";

export const PROVIDERS = ["email", "google", "apple", "wallet"] as const;
export type ProviderId = typeof PROVIDERS[number];

/** Whether the process has the settings the provider needs. */
export function providerConfigured(deps: Deps, provider: ProviderId): boolean {
  if (provider === "google") return deps.settings.google !== null;
  if (provider === "apple") return deps.settings.apple !== null;
  return true;
}

/** Every provider and whether it is on now, in the order of `PROVIDERS`. */
export async function providerStates(
  deps: Deps,
): Promise<{ id: ProviderId; enabled: boolean }[]> {
  const { signIn } = (await deps.config.get()).features;
  return PROVIDERS.map((id) => ({
    id,
    enabled: providerConfigured(deps, id) && signIn[id] !== false,
  }));
}

/** Throws 400 `provider_disabled` unless the provider is on. */
export async function requireProvider(deps: Deps, provider: ProviderId): Promise<void> {
  const state = (await providerStates(deps)).find((p) => p.id === provider);
  if (state?.enabled) return;
  const why = providerConfigured(deps, provider) ? "turned off" : "not configured";
  throw new ApiError("provider_disabled", `Sign-in with ${provider} is ${why}.`, {
    provider,
    reason: providerConfigured(deps, provider) ? "disabled" : "not_configured",
  });
}
