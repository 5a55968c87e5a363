// cluster.network in scenario files: the default, a bad value named with what is expected, a
// `network` matrix axis (one cell per network), the refusal on targets that cannot start their
// nodes in namespaces (naming why), and wantsLabNetwork, which the targets' loaders are handed.
import { describe, expect, it } from 'vitest';
import { compileScenario } from './index.ts';
import { scenarioRefusal } from './scenario-test-helpers.ts';
import { wantsLabNetwork } from '../faults/scenario-wants.ts';

const compile = (text: string) => compileScenario(text, 'net.yaml', { defaultName: 'net' });
const issues = (text: string): Array<{ path: string; expected: string; found: string }> => scenarioRefusal(compile, text).issues;

describe('cluster.network', () => {
  it('defaults to loopback, and namespaces is carried to the cluster spec', () => {
    const plain = compile('question: q\ncluster: { brokers: 3 }\n');
    expect(plain.cluster.network).toBeUndefined();
    expect(wantsLabNetwork(plain)).toBe(false);
    const ns = compile('question: q\ncluster: { brokers: 3, network: namespaces }\n');
    expect(ns.cluster.network).toBe('namespaces');
    expect(wantsLabNetwork(ns)).toBe(true);
    expect(wantsLabNetwork(compile('question: q\ntarget: kafka\ncluster: { brokers: 3, network: namespaces }\n'))).toBe(true);
  });

  it('refuses a value that is not a network, saying what is expected', () => {
    expect(issues('question: q\ncluster: { network: bridge }\n')).toEqual([
      expect.objectContaining({ path: 'cluster.network', expected: expect.stringMatching(/^loopback \| namespaces/), found: expect.stringContaining('bridge') }),
    ]);
  });

  it('is a matrix axis: one cell per network, the rest equal', () => {
    const s = compile('question: q\ntarget: kafka\ncluster: { brokers: 1 }\nmatrix: { network: [loopback, namespaces] }\n');
    expect(s.matrix.map((c) => c.id)).toEqual(['network=loopback', 'network=namespaces']);
    expect(s.matrix.map((c) => c.label)).toEqual(['loopback', 'namespaces']);
    expect(wantsLabNetwork(s)).toBe(true);
    expect(wantsLabNetwork(compile('question: q\nmatrix: { network: [loopback] }\n'))).toBe(false);
    expect(issues('question: q\nmatrix: { network: [loopback, wifi] }\n')[0]).toMatchObject({ path: 'matrix.network[1]' });
  });

  it('refuses namespaces on the vm and external targets, naming why, and only for their cells', () => {
    const vm = issues('question: q\ntarget: vm\ncluster: { brokers: 2, network: namespaces }\n');
    expect(vm).toEqual([expect.objectContaining({ path: 'cluster.network', found: 'namespaces', expected: expect.stringMatching(/^network: loopback on target: vm \(its brokers are QEMU guests/) })]);
    const ext = issues('question: q\ntarget: external\nexternal: { bootstrap: ["127.0.0.1:9092"] }\nsettings: { network: namespaces }\n');
    expect(ext).toEqual([expect.objectContaining({ path: 'settings.network', expected: expect.stringMatching(/on target: external \(its brokers run on hosts the lab did not start/) })]);
    const axis = issues('question: q\ncluster: { brokers: 1 }\nmatrix: { target: [durolab, vm], network: [loopback, namespaces] }\n');
    expect(axis).toEqual([expect.objectContaining({ path: 'matrix.network', expected: expect.stringContaining('target: vm') })]);
    // Excluding the vm's namespaces cell takes the refusal away.
    const ok = compile('question: q\ncluster: { brokers: 1 }\nmatrix: { target: [durolab, vm], network: [loopback, namespaces], exclude: [{ target: vm, network: namespaces }] }\n');
    expect(ok.matrix.map((c) => c.id)).toEqual(['target=durolab,network=loopback', 'target=durolab,network=namespaces', 'target=vm,network=loopback']);
  });
});
