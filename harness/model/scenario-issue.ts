// A problem a fault kind or a target finds in a scenario, as `scenario check` reports it.

/** One problem a kind finds in a scenario: where (under the fault, or at the top level), what it expected, what it found. */
export interface FaultScenarioIssue {
  path: Array<string | number>;
  /** The path is the scenario's own (e.g. ['cluster']), not under the fault's entry. */
  topLevel?: boolean;
  expected: string;
  found: string;
}
