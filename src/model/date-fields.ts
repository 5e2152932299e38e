/**
 * The instance times the service's list filters take as `<field>_after` / `<field>_before` bounds (docs/service.md):
 * one list for the sandbox that answers them and the state that reasons about bounds moving with the clock.
 */
export const DATE_FIELDS = [
  "started_time",
  "last_updated_time",
  "deadline",
  "step_deadline",
  "aborted_time",
  "completed_time",
  "ended_time",
] as const;
