/**
 * The one base of the daemon's thrown errors: a stable `code` (docs/errors.md lists every one; scripts
 * and tests match on it), the lower error as `cause`, and `retryable`: whether the same call again
 * can succeed without anyone acting. Each component keeps its own subclass and its list of codes.
 * Expected refusals on a hot path stay result unions (pairing, the hosting contract); this is for
 * what is thrown.
 * Must not know: any component's codes, how an error is printed or sent.
 */

export interface CodedErrorOptions {
  readonly cause?: unknown;
  /** Whether the same call again can succeed by itself. */
  readonly retryable: boolean;
}

export abstract class CodedError<Code extends string = string> extends Error {
  readonly code: Code;
  readonly retryable: boolean;

  protected constructor(code: Code, message: string, options: CodedErrorOptions) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.retryable = options.retryable;
  }
}
