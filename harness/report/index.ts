// harness/report: self-contained HTML reports from results/<scenario>/<run id>/run.json.

export { renderRunReport, type RenderOptions } from './run-page.ts';
export { writeRunReport, writeReportsIndex, type WriteOptions } from './write-reports.ts';
export { findings, verdict } from './findings.ts';
export { main } from './report-command.ts';
export { readRunJson, listRuns, resolveRunFile, asRunResult } from './load-runs.ts';
export { defaultDirs } from './repo-paths.ts';
export { runCharts, compileChart, type Chart } from './charts.ts';
