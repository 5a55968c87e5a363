// Scenario files and the engine CLI spell sizes and durations the same way; the parser lives
// in engine/ because the engine must not depend on the harness.
export { formatDurationMs, formatSize, parseDuration, parseSize } from '../../engine/units.ts';
