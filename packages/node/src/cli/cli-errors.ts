/**
 * The two ways a command ends badly on purpose: a usage error (exit 2: the command line itself is
 * wrong, usage follows the message) and a failure (exit 1: what failed and what to do). Anything
 * else thrown is a bug or an error of a lower layer that `main` reports as a failure.
 * Must not know: which command runs, how messages are printed.
 */

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/** The command line is wrong: an unknown flag, a bad value, a missing argument. */
export class UsageError extends Error {
  override readonly name = "UsageError";
  readonly exitCode = EXIT_USAGE;
}

/** The command could not do its job. The message names what failed and what to do. */
export class CliFailure extends Error {
  override readonly name = "CliFailure";
  readonly exitCode = EXIT_FAILURE;
}
