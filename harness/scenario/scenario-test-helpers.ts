// Tests of scenario refusals: the ScenarioError a scenario text is refused with.
import { ScenarioError } from './errors.ts';

/** The ScenarioError `compile(text)` throws (its message, its issues); a text that compiles fails the test. */
export function scenarioRefusal(compile: (text: string) => unknown, text: string): ScenarioError {
  try {
    compile(text);
  } catch (err) {
    if (err instanceof ScenarioError) return err;
    throw err;
  }
  throw new Error('expected the scenario to be refused');
}
