import { describe, expect, it } from "vitest";
import { Metrics } from "../../src/observability/metrics.js";

describe("Metrics", () => {
  it("counts one series per label set, whatever the order its labels were given in", () => {
    const m = new Metrics();
    m.inc("req_total", "Requests.", { route: "/a", model: "m" });
    m.inc("req_total", "Requests.", { model: "m", route: "/a" }, 2);
    m.inc("req_total", "Requests.", { route: "/a", model: "n" });
    m.inc("req_total", "Requests.", { route: "/a" });
    m.inc("req_total", "Requests.", { route: '/"b"\\\n' });
    expect(m.render().split("\n")).toEqual([
      "# HELP req_total Requests.",
      "# TYPE req_total counter",
      'req_total{model="m",route="/a"} 3',
      'req_total{model="n",route="/a"} 1',
      'req_total{route="/a"} 1',
      'req_total{route="/\\"b\\"\\\\\\n"} 1',
      "",
    ]);
  });

  it("keeps label sets apart that only differ in how their text splits into names and values", () => {
    const m = new Metrics();
    m.inc("x_total", "X.", { a: "bc" });
    m.inc("x_total", "X.", { ab: "c" });
    m.inc("x_total", "X.", { a: "b", c: "" });
    expect(m.render()).toContain('x_total{a="bc"} 1');
    expect(m.render()).toContain('x_total{ab="c"} 1');
    expect(m.render()).toContain('x_total{a="b",c=""} 1');
  });

  it("observes into cumulative buckets per label set", () => {
    const m = new Metrics();
    m.observe("d_seconds", "D.", { route: "/a" }, 0.003);
    m.observe("d_seconds", "D.", { route: "/a" }, 0.2);
    const text = m.render();
    expect(text).toContain('d_seconds_bucket{route="/a",le="0.001"} 0');
    expect(text).toContain('d_seconds_bucket{route="/a",le="0.005"} 1');
    expect(text).toContain('d_seconds_bucket{route="/a",le="0.25"} 2');
    expect(text).toContain('d_seconds_bucket{route="/a",le="+Inf"} 2');
    expect(text).toContain('d_seconds_count{route="/a"} 2');
  });
});
