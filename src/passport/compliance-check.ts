// One compliance check's result: its own file, so the client SDK's types (checked without Node's)
// read it without loading the checks.
export interface ComplianceCheck {
  name: string;
  passed: boolean;
  value: number | string | null;
  /** The rule, in words; null when the document sets no rule (the check then passes and says so). */
  expected: string | null;
  /** 'error': a failure makes the photo non-compliant; 'warning': advisory (compliant stays true). */
  severity: 'error' | 'warning';
  /** What was found, in a sentence a person understands. */
  message: string;
  /**
   * 'borderline': the measure lies within `margin` of `limit`, so the decision could go either way
   * (then `passed` is false and `severity` 'warning': look at it).
   */
  status: 'pass' | 'borderline' | 'fail';
  /** The number decided on, the limit it was nearest and the borderline margin; null for a yes/no check. */
  measure: number | null;
  limit: number | null;
  margin: number | null;
}
