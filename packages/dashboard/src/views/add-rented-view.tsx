/**
 * Add a rented GPU (on the sponsor): whether the Hugging Face token is in the OS credential store
 * and for which namespace; the model from the catalog or by repository id; the GPU from the list
 * with its $/hr and quota, in a region; budget caps and idle settings; then create, and follow the
 * new node through the provider's states with elapsed time and cost so far until it runs (or fails).
 * Must not know: HTTP (it is given loaders and the create call), the other views.
 */

import { useEffect, useState } from "preact/hooks";
import { StateBadge } from "../badges.js";
import { formatCost, formatDuration, formatHourly } from "../format.js";
import { routeHref } from "../route.js";
import type { CreateRentedRequest, HardwareOffer, RentedAccount, SponsoredNode } from "../wire.js";

export interface AddRentedDeps {
  account(): Promise<RentedAccount>;
  catalog(): Promise<{ repo_id: string }[]>;
  hardware(namespace: string | null): Promise<HardwareOffer[]>;
  create(body: CreateRentedRequest): Promise<SponsoredNode>;
}

export interface AddRentedProps {
  readonly deps: AddRentedDeps;
  /** The sponsor's rented nodes, polled (≤ 1 s while a creation runs). */
  readonly sponsored: readonly SponsoredNode[] | undefined;
  /** Called with the name being created (the caller polls faster while one is). */
  readonly onCreating: (name: string | undefined) => void;
  readonly creating: string | undefined;
}

type Loaded =
  | { readonly kind: "loading" }
  | { readonly kind: "failed"; readonly message: string }
  | {
      readonly kind: "ready";
      readonly account: RentedAccount;
      readonly catalog: readonly { repo_id: string }[];
      readonly hardware: readonly HardwareOffer[];
    };

export function offerKey(o: HardwareOffer): string {
  return `${o.vendor}/${o.region}/${o.instance_type}/${o.instance_size}`;
}

export function AddRentedView(props: AddRentedProps) {
  const [loaded, setLoaded] = useState<Loaded>({ kind: "loading" });
  useEffect(() => {
    let gone = false;
    (async () => {
      const account = await props.deps.account();
      if (!account.signed_in) return { kind: "ready", account, catalog: [], hardware: [] } as const;
      const [catalog, hardware] = await Promise.all([
        props.deps.catalog(),
        props.deps.hardware(account.namespace),
      ]);
      return { kind: "ready", account, catalog, hardware } as const;
    })().then(
      (l) => !gone && setLoaded(l),
      (e: unknown) =>
        !gone && setLoaded({ kind: "failed", message: e instanceof Error ? e.message : String(e) }),
    );
    return () => {
      gone = true;
    };
  }, []);

  return (
    <section aria-labelledby="add-title">
      <p>
        <a href="#/nodes">← All nodes</a>
      </p>
      <h2 id="add-title">Add rented GPU</h2>
      {props.creating !== undefined ? (
        <Progress
          name={props.creating}
          sponsored={props.sponsored}
          onDone={() => props.onCreating(undefined)}
        />
      ) : loaded.kind === "loading" ? (
        <p role="status">Asking Hugging Face for your account, models and GPUs…</p>
      ) : loaded.kind === "failed" ? (
        <p role="alert" class="error">
          {loaded.message}
        </p>
      ) : !loaded.account.signed_in ? (
        <SignIn account={loaded.account} />
      ) : (
        <CreateForm {...props} account={loaded.account} catalog={loaded.catalog} hardware={loaded.hardware} />
      )}
    </section>
  );
}

function SignIn({ account }: { readonly account: RentedAccount }) {
  return (
    <div class="panel" role="note" aria-label="Hugging Face sign-in">
      <h3>Not signed in to Hugging Face</h3>
      <p>{account.message ?? "No Hugging Face token in the OS credential store."}</p>
      <p>
        On this node's machine run <code>pair credential set hf</code>, paste a token with the “Inference
        Endpoints” permission, then reload this page.
      </p>
    </div>
  );
}

function CreateForm(
  props: AddRentedProps & {
    readonly account: RentedAccount;
    readonly catalog: readonly { repo_id: string }[];
    readonly hardware: readonly HardwareOffer[];
  },
) {
  const { account, catalog, hardware } = props;
  const regions = [...new Set(hardware.map((o) => `${o.vendor}/${o.region}`))].sort();
  const [name, setName] = useState("");
  const [modelFrom, setModelFrom] = useState<"catalog" | "repo">(catalog.length > 0 ? "catalog" : "repo");
  const [catalogId, setCatalogId] = useState(catalog[0]?.repo_id ?? "");
  const [repo, setRepo] = useState("");
  const [region, setRegion] = useState(regions[0] ?? "");
  const inRegion = hardware.filter((o) => `${o.vendor}/${o.region}` === region);
  const [offer, setOffer] = useState<string>(inRegion[0] === undefined ? "" : offerKey(inRegion[0]));
  const [perDay, setPerDay] = useState("10");
  const [perMonth, setPerMonth] = useState("100");
  const [idleMin, setIdleMin] = useState("15");
  const [wake, setWake] = useState(true);
  const [share, setShare] = useState(false);
  const [access, setAccess] = useState<"private" | "authenticated">("private");
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const chosen = inRegion.find((o) => offerKey(o) === offer);

  const submit = async () => {
    if (busy) return;
    const problems: string[] = [];
    if (!/^[a-z0-9][a-z0-9-]{0,31}$/.test(name))
      problems.push("Name: lowercase letters, digits and dashes, up to 32, starting with a letter or digit");
    if (modelFrom === "repo" && !/^[\w.-]+\/[\w.-]+$/.test(repo.trim()))
      problems.push("Repository id: owner/name, e.g. Qwen/Qwen3-0.6B");
    if (modelFrom === "catalog" && catalogId === "") problems.push("Model: choose one from the catalog");
    if (chosen === undefined) problems.push("GPU: choose one in the region");
    const day = optionalNumber(perDay);
    const month = optionalNumber(perMonth);
    const idle = optionalNumber(idleMin);
    if (Number.isNaN(day) || Number.isNaN(month))
      problems.push("Budget: a number of USD, or empty for no cap in that window");
    // The node refuses a create with no cap (budget_required): a rented GPU bills while it runs.
    else if (day === undefined && month === undefined)
      problems.push("Budget: give a cap per day or per month (a rented GPU bills while it runs)");
    if (Number.isNaN(idle) || idle === undefined || idle < 1) problems.push("Idle pause: at least 1 minute");
    if (problems.length > 0 || chosen === undefined) return setError(problems.join(". "));
    const body: CreateRentedRequest = {
      name,
      provider: "huggingface-endpoint",
      credential: account.credential,
      ...(account.namespace === null ? {} : { namespace: account.namespace }),
      ...(modelFrom === "catalog" ? { catalog: catalogId } : { repo: repo.trim() }),
      vendor: chosen.vendor,
      region: chosen.region,
      instance_type: chosen.instance_type,
      instance_size: chosen.instance_size,
      access,
      budget: {
        ...(day === undefined ? {} : { usd_per_day: day }),
        ...(month === undefined ? {} : { usd_per_month: month }),
      },
      lifecycle: { idle_pause_min: idle ?? 15, wake_on_request: wake },
      share_with_cluster: share,
    };
    setBusy(true);
    setError(undefined);
    try {
      await props.deps.create(body);
      props.onCreating(name);
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form
      class="add-form"
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
    >
      <p class="signed-in">
        Signed in to Hugging Face as <strong>{account.namespace ?? "?"}</strong>
        {account.account_type === null ? "" : ` (${account.account_type})`}, token from{" "}
        <code>{account.credential}</code>.
      </p>
      <fieldset>
        <legend>Node</legend>
        <label for="add-name">Name in PAIR</label>
        <input
          id="add-name"
          type="text"
          autocomplete="off"
          aria-describedby="add-name-hint"
          placeholder="gpu-l4"
          value={name}
          onInput={(e) => setName(e.currentTarget.value)}
        />
        <span id="add-name-hint" class="muted">
          Lowercase letters, digits and dashes; it names the endpoint on Hugging Face too.
        </span>
      </fieldset>
      <fieldset>
        <legend>Model</legend>
        <label class="inline">
          <input
            type="radio"
            name="model-from"
            checked={modelFrom === "catalog"}
            disabled={catalog.length === 0}
            onChange={() => setModelFrom("catalog")}
          />{" "}
          From the catalog
        </label>
        <label class="inline">
          <input
            type="radio"
            name="model-from"
            checked={modelFrom === "repo"}
            onChange={() => setModelFrom("repo")}
          />{" "}
          By repository id
        </label>
        {modelFrom === "catalog" ? (
          <>
            <label for="add-catalog">Catalog model</label>
            <select id="add-catalog" value={catalogId} onChange={(e) => setCatalogId(e.currentTarget.value)}>
              {catalog.map((c) => (
                <option key={c.repo_id} value={c.repo_id}>
                  {c.repo_id}
                </option>
              ))}
            </select>
          </>
        ) : (
          <>
            <label for="add-repo">Repository id</label>
            <input
              id="add-repo"
              type="text"
              autocomplete="off"
              placeholder="Qwen/Qwen3-0.6B"
              value={repo}
              onInput={(e) => setRepo(e.currentTarget.value)}
            />
          </>
        )}
      </fieldset>
      <fieldset>
        <legend>GPU</legend>
        <label for="add-region">Region</label>
        <select
          id="add-region"
          value={region}
          onChange={(e) => {
            const r = e.currentTarget.value;
            setRegion(r);
            const first = hardware.find((o) => `${o.vendor}/${o.region}` === r);
            setOffer(first === undefined ? "" : offerKey(first));
          }}
        >
          {regions.map((r) => (
            <option key={r} value={r}>
              {r}
            </option>
          ))}
        </select>
        <table class="grid offers">
          <caption class="sr-only">GPUs in {region}, with price and quota</caption>
          <thead>
            <tr>
              <th scope="col">Choose</th>
              <th scope="col">GPU</th>
              <th scope="col">Memory</th>
              <th scope="col">Price</th>
              <th scope="col">Quota left</th>
            </tr>
          </thead>
          <tbody>
            {inRegion.map((o) => {
              const key = offerKey(o);
              const id = `offer-${key.replace(/[^a-z0-9]/gi, "-")}`;
              return (
                <tr key={key} data-offer={o.instance_type}>
                  <td data-label="Choose">
                    <input
                      id={id}
                      type="radio"
                      name="offer"
                      checked={offer === key}
                      onChange={() => setOffer(key)}
                    />
                  </td>
                  <th scope="row" data-label="GPU">
                    <label for={id}>
                      {o.gpus > 1 ? `${o.gpus}× ` : ""}
                      {o.gpu}{" "}
                      <span class="muted">
                        ({o.instance_type} {o.instance_size})
                      </span>
                    </label>
                  </th>
                  <td data-label="Memory">{o.vram_gb === null ? "—" : `${o.vram_gb} GB`}</td>
                  <td data-label="Price">{formatHourly(o.usd_per_hour)}</td>
                  <td data-label="Quota left">{o.quota_available ?? "—"}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </fieldset>
      <fieldset>
        <legend>Budget and idle</legend>
        <label for="add-day">Cap per day (USD, empty: none)</label>
        <input
          id="add-day"
          type="number"
          min="0"
          step="0.01"
          value={perDay}
          onInput={(e) => setPerDay(e.currentTarget.value)}
        />
        <label for="add-month">Cap per month (USD, empty: none)</label>
        <input
          id="add-month"
          type="number"
          min="0"
          step="0.01"
          value={perMonth}
          onInput={(e) => setPerMonth(e.currentTarget.value)}
        />
        <label for="add-idle">Pause after this many idle minutes</label>
        <input
          id="add-idle"
          type="number"
          min="1"
          step="1"
          value={idleMin}
          onInput={(e) => setIdleMin(e.currentTarget.value)}
        />
        <label class="inline">
          <input type="checkbox" checked={wake} onChange={(e) => setWake(e.currentTarget.checked)} /> Wake on
          request
        </label>
        <label class="inline">
          <input type="checkbox" checked={share} onChange={(e) => setShare(e.currentTarget.checked)} /> Share
          with the cluster
        </label>
        <label for="add-access">Access</label>
        <select
          id="add-access"
          value={access}
          onChange={(e) => setAccess(e.currentTarget.value === "authenticated" ? "authenticated" : "private")}
        >
          <option value="private">private</option>
          <option value="authenticated">authenticated</option>
        </select>
      </fieldset>
      <p class="summary">
        {chosen === undefined
          ? "Choose a GPU."
          : `${chosen.gpu} in ${chosen.vendor}/${chosen.region}: ${formatHourly(chosen.usd_per_hour)}, billed by the minute while it runs.`}
      </p>
      {error === undefined ? null : (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      <button type="submit" aria-disabled={busy}>
        Create
      </button>
    </form>
  );
}

function optionalNumber(text: string): number | undefined {
  if (text.trim() === "") return undefined;
  const n = Number(text);
  return Number.isFinite(n) && n >= 0 ? n : Number.NaN;
}

function Progress(props: {
  readonly name: string;
  readonly sponsored: readonly SponsoredNode[] | undefined;
  readonly onDone: () => void;
}) {
  const node = props.sponsored?.find((s) => s.name === props.name);
  const spend = node?.managed?.spend_usd?.total ?? 0;
  const over = node !== undefined && (node.state === "running" || node.state === "failed");
  return (
    <div class="panel progress" aria-labelledby="progress-title">
      <h3 id="progress-title">Creating {props.name}</h3>
      {node === undefined ? (
        <p role="status">Waiting for the node to appear…</p>
      ) : (
        <dl class="facts" aria-live="polite">
          <div>
            <dt>State</dt>
            <dd>
              <StateBadge state={node.state} />
            </dd>
          </div>
          <div>
            <dt>Provider's state</dt>
            <dd data-provider-state>{node.provider_state ?? "—"}</dd>
          </div>
          <div>
            <dt>Elapsed</dt>
            <dd>{node.created == null ? "—" : formatDuration(node.created.elapsed_s * 1_000)}</dd>
          </div>
          <div>
            <dt>Cost so far</dt>
            <dd>{formatCost(spend)}</dd>
          </div>
          {node.provider_message == null ? null : (
            <div>
              <dt>Provider message</dt>
              <dd>{node.provider_message}</dd>
            </div>
          )}
        </dl>
      )}
      {over ? (
        <p role="status">
          {node.state === "running" ? `${props.name} is running.` : `${props.name} failed.`}{" "}
          <a href={routeHref({ view: "node", name: props.name })} onClick={props.onDone}>
            Open {props.name}
          </a>
        </p>
      ) : null}
    </div>
  );
}
