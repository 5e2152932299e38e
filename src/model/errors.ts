/** Exit codes of the CLI contract (docs/cli.md). */
export const EXIT_OK = 0;
export const EXIT_ERROR = 1;
/** success with changes, only with --detailed-exitcode */
export const EXIT_CHANGES = 2;

/** An error meant for the user: printed as one clear message, never with a stack trace. */
export class UserError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT_ERROR,
  ) {
    super(message);
    this.name = "UserError";
  }
}
