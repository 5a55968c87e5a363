// The scenario's vm.disk: block: parsed with defaults from the registry, bad input named by
// field, cell settings (vm.disk.* in settings/matrix) override the block, the disk model's id
// and its text in summary and report, and the settings reference documents every field.
import { describe, expect, it } from 'vitest';
import { SETTINGS } from '../../engine/settings/registry.ts';
import { renderSettingsText } from '../../engine/settings/reference.ts';
import { runDiskModelText } from '../targets/run-targets.ts';
import { scenarioRefusal } from '../scenario/scenario-test-helpers.ts';
import { compileScenario } from '../scenario/validate.ts';
import { DEFAULT_DISK_SPEC, DEFAULT_WRITE_LOG_LIMIT, diskModelId, diskVariesByCell, effectiveDiskSpec } from '../model/disk-spec.ts';

const compile = (text: string) => compileScenario(text, 'disk.yaml', { defaultName: 'disk' });
const issuesOf = (text: string): string => scenarioRefusal(compile, text).message;

describe('vm.disk', () => {
  it('defaults to the file disk; a volatile-cache block gets the registry defaults', () => {
    expect(compile('question: q\ntarget: vm\n').vm?.disk).toBeUndefined();
    const s = compile(
      'question: q\ntarget: vm\nvm:\n  disk:\n    model: volatile-cache\n    errors:\n      - { on: write, nth: 3000 }\n      - { on: sectors, from: 8, to: 15 }\n    latency: { perOp: 200us, jitter: 0.1ms, stallEvery: 10s, stallFor: 500ms }\n',
    );
    expect(s.vm?.disk).toEqual({
      model: 'volatile-cache',
      onCut: 'drop-unflushed',
      flush: 'honoured',
      errors: [
        { on: 'write', nth: 3000, sticky: false },
        { on: 'sectors', from: 8, to: 15, sticky: true },
      ],
      latency: { perOpUs: 200, jitterUs: 100, stallEveryMs: 10_000, stallForMs: 500 },
      writeLogLimitBytes: DEFAULT_WRITE_LOG_LIMIT,
    });
    expect(DEFAULT_WRITE_LOG_LIMIT).toBe(SETTINGS.find((x) => x.name === 'vm.disk.writeLogLimit')!.default);
  });

  it('names the field and what was expected', () => {
    expect(issuesOf('question: q\ntarget: vm\nvm: { disk: { model: ssd } }\n')).toMatch(/vm\.disk\.model: expected file \| volatile-cache/);
    expect(issuesOf('question: q\ntarget: vm\nvm: { disk: { model: volatile-cache, onCut: shuffle } }\n')).toMatch(/vm\.disk\.onCut: expected drop-unflushed \| random-subset \| reorder \| torn/);
    expect(issuesOf('question: q\ntarget: vm\nvm: { disk: { onCut: torn } }\n')).toMatch(/vm\.disk\.onCut: expected no onCut with model: file/);
    expect(issuesOf('question: q\ntarget: vm\nvm: { disk: { model: volatile-cache, errors: [{ on: write, nth: 0 }] } }\n')).toMatch(/vm\.disk\.errors/);
    expect(issuesOf('question: q\ntarget: vm\nvm: { disk: { model: volatile-cache, writeLogLimit: 1KiB } }\n')).toMatch(/vm\.disk\.writeLogLimit: expected a size of at least 64KiB/);
    expect(issuesOf('question: q\ntarget: external\nexternal: { bootstrap: "127.0.0.1:9092" }\nmatrix:\n  vm.disk.model: [file, volatile-cache]\n')).toMatch(/no vm\.disk\.model on target: external/);
  });

  it('cell settings override the block; the model id and its text follow', () => {
    const s = compile('question: q\ntarget: vm\nvm: { disk: { model: volatile-cache, onCut: torn } }\nmatrix:\n  vm.disk.model: [file, volatile-cache]\n  vm.disk.flush: [honoured, ignored]\n');
    expect(s.matrix.map((c) => c.id)).toContain('vm.disk.model=volatile-cache,vm.disk.flush=ignored');
    expect(diskVariesByCell(s.matrix, s.settings)).toBe(true);
    const lying = effectiveDiskSpec(s.vm!.disk, s.matrix.find((c) => c.params['vm.disk.flush'] === 'ignored' && c.params['vm.disk.model'] === 'volatile-cache')!.params);
    expect(lying).toMatchObject({ model: 'volatile-cache', onCut: 'torn', flush: 'ignored' });
    expect(diskModelId(lying)).toBe('nbd-volatile-cache+torn+flush-ignored');
    expect(runDiskModelText({ target: 'vm', diskModel: diskModelId(lying) })).toMatch(/onCut torn\), flush ignored \(a lying drive\).*persist nothing/);
    expect(diskModelId(effectiveDiskSpec(undefined, {}))).toBe('virtio-blk-file-writeback');
    expect(diskModelId({ ...DEFAULT_DISK_SPEC, model: 'volatile-cache', errors: [{ on: 'flush', nth: 1, sticky: false }] })).toBe('nbd-volatile-cache+drop-unflushed+eio');
    expect(runDiskModelText({ target: 'vm', diskModel: 'nbd-volatile-cache+random-subset' })).toMatch(/random half of their contiguous sector runs/);
  });

  it('the settings reference documents every vm.disk field', () => {
    const text = renderSettingsText();
    for (const f of ['model', 'onCut', 'flush', 'errors', 'latency', 'writeLogLimit']) expect(text).toContain(`vm.disk.${f}=`);
    expect(text).toMatch(/vm\.disk\.errors=block[\s\S]*only in the scenario's vm\.disk: block/);
  });
});
