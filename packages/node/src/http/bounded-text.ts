// Lives in @pair/sponsor, the lowest package that reads an upstream's small answer (its models
// probe); the daemon's engines, context probes and peer asks import it from here.
export { boundedText } from "@pair/sponsor";
