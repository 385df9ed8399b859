// The base lives in @pair/cluster, the lowest package that throws one (ClusterError); the daemon's
// components import it from here.
export { CodedError, type CodedErrorOptions } from "@pair/cluster";
