/**
 * The admin API over the rented nodes this node sponsors (@pair/sponsor holds the nodes): list,
 * attach, share, policy, lifecycle, reset and probe; `pair rented create`'s Hugging Face account
 * routes; the state history; the spend. The public face of this folder.
 * Must not know: the client API, how a provider is driven.
 */

export { isRentedAdminPath, RENTED_ADMIN_PATHS, serveRentedAdmin } from "./rented-admin-routes.js";
export { HF_ACCOUNT_PATHS, isHfAccountPath, serveHfAccount } from "./hf-account-routes.js";
export { serveStateHistory, STATE_HISTORY_PATH } from "./state-history-route.js";
export { serveSpend, SPEND_PATH } from "./spend-route.js";
