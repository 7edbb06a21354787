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
}
