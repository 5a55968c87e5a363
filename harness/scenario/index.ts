// Scenarios: YAML files that say what to compare (a matrix of settings), under which load
// and faults, and what must hold at the end (expectations).

export { ScenarioError, formatIssue, type ScenarioIssue } from './errors.ts';
export { evaluateExpectations, effectiveParams, parseExpectation, METRICS } from './expectations.ts';
export { cellSettings, defaultScenariosDir, listScenarios, loadScenario } from './loader.ts';
export { cellId, cellLabel, expandMatrix } from './matrix.ts';
export { DEFAULT_SETTINGS, logConfig, type ResolvedSettings } from '../model/settings.ts';
export { SETTINGS, SETTING_NAMES, flushPolicy, type Acks, type SettingValue } from './settings.ts';
export { compileScenario, parseOverrideFlags } from './validate.ts';
export { formatDurationMs, formatSize, parseDuration, parseSize } from '../model/units.ts';
export type {
  ClusterSpec,
  CompareOp,
  Condition,
  Expectation,
  Fault,
  FaultVictims,
  FaultWhen,
  MatrixCell,
  MetricRef,
  Operand,
  Scenario,
  Target,
  VmOptions,
  WorkloadSpec,
} from '../model/scenario.ts';
