/**
 * Prometheus metrics in text exposition format (0.0.4), kept by hand: counters, gauges and
 * histograms with labels. Small on purpose: no client library, nothing on the hot path but a map
 * lookup and an increment.
 * Must not know: HTTP routing (the server calls `render()`).
 */

type Labels = Readonly<Record<string, string>>;

const LATENCY_BUCKETS_S = [
  0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600,
];

function key(labels: Labels): string {
  return Object.keys(labels)
    .sort()
    .map((k) => `${k}="${escapeLabel(labels[k]!)}"`)
    .join(",");
}

function escapeLabel(v: string): string {
  return v.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');
}

interface KeyNode {
  readonly next: Map<string, KeyNode>;
  key?: string;
}

function step(node: KeyNode, part: string): KeyNode {
  let next = node.next.get(part);
  if (next === undefined) node.next.set(part, (next = { next: new Map() }));
  return next;
}

class Series<T> {
  readonly values = new Map<string, T>();
  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: "counter" | "gauge" | "histogram",
  ) {}
}

/** One sample of a family read at scrape time: its labels and value. */
export interface Sample {
  readonly labels: Labels;
  readonly value: number;
}

interface Family {
  readonly name: string;
  readonly help: string;
  readonly type: "counter" | "gauge";
  readonly read: () => readonly Sample[];
}

export class Metrics {
  readonly #counters = new Map<string, Series<number>>();
  readonly #gauges = new Map<string, Series<() => number>>();
  readonly #families = new Map<string, Family>();
  readonly #histograms = new Map<string, Series<{ buckets: number[]; sum: number; count: number }>>();
  /**
   * Rendered keys, found by walking the labels as given (name, value, name, value, …): sorting and
   * escaping happen once per label set, not per increment. It grows with the label sets, as the
   * series do.
   */
  readonly #keys: KeyNode = { next: new Map() };

  #key(labels: Labels): string {
    let node = this.#keys;
    for (const name in labels) node = step(step(node, name), labels[name]!);
    return (node.key ??= key(labels));
  }

  inc(name: string, help: string, labels: Labels, by = 1): void {
    let s = this.#counters.get(name);
    if (s === undefined) this.#counters.set(name, (s = new Series(name, help, "counter")));
    const k = this.#key(labels);
    s.values.set(k, (s.values.get(k) ?? 0) + by);
  }

  /** A gauge read when scraped. */
  gauge(name: string, help: string, labels: Labels, read: () => number): void {
    let s = this.#gauges.get(name);
    if (s === undefined) this.#gauges.set(name, (s = new Series(name, help, "gauge")));
    s.values.set(key(labels), read);
  }

  /**
   * Series whose label sets are known only when scraped (the rented nodes and peers of the moment),
   * or counters kept elsewhere (the process's CPU time): `read` gives every sample. Off the hot path.
   */
  family(name: string, help: string, type: "counter" | "gauge", read: () => readonly Sample[]): void {
    this.#families.set(name, { name, help, type, read });
  }

  observe(name: string, help: string, labels: Labels, seconds: number): void {
    let s = this.#histograms.get(name);
    if (s === undefined) this.#histograms.set(name, (s = new Series(name, help, "histogram")));
    const k = this.#key(labels);
    let h = s.values.get(k);
    if (h === undefined) s.values.set(k, (h = { buckets: LATENCY_BUCKETS_S.map(() => 0), sum: 0, count: 0 }));
    for (let i = 0; i < LATENCY_BUCKETS_S.length; i += 1)
      if (seconds <= LATENCY_BUCKETS_S[i]!) h.buckets[i]! += 1;
    h.sum += seconds;
    h.count += 1;
  }

  render(): string {
    const out: string[] = [];
    const head = (s: Series<unknown>) => out.push(`# HELP ${s.name} ${s.help}`, `# TYPE ${s.name} ${s.type}`);
    const sel = (k: string, extra = "") => {
      const inner = [k, extra].filter((x) => x !== "").join(",");
      return inner === "" ? "" : `{${inner}}`;
    };
    for (const s of this.#counters.values()) {
      head(s);
      for (const [k, v] of s.values) out.push(`${s.name}${sel(k)} ${v}`);
    }
    for (const s of this.#gauges.values()) {
      head(s);
      for (const [k, read] of s.values) out.push(`${s.name}${sel(k)} ${read()}`);
    }
    for (const f of this.#families.values()) {
      const samples = f.read();
      if (samples.length === 0) continue;
      out.push(`# HELP ${f.name} ${f.help}`, `# TYPE ${f.name} ${f.type}`);
      for (const sample of samples) out.push(`${f.name}${sel(key(sample.labels))} ${sample.value}`);
    }
    for (const s of this.#histograms.values()) {
      head(s);
      for (const [k, h] of s.values) {
        LATENCY_BUCKETS_S.forEach((le, i) =>
          out.push(`${s.name}_bucket${sel(k, `le="${le}"`)} ${h.buckets[i]}`),
        );
        out.push(`${s.name}_bucket${sel(k, 'le="+Inf"')} ${h.count}`);
        out.push(`${s.name}_sum${sel(k)} ${h.sum}`);
        out.push(`${s.name}_count${sel(k)} ${h.count}`);
      }
    }
    return `${out.join("\n")}\n`;
  }
}
