// Faults: when they fire, whom they hit, how they are delivered, and the recovery after them.
export { planFault, waitForFaultMoment, describeWhen, type FaultPlan, type FaultMoment } from './schedule.ts';
export { resolveVictims, describeVictims } from './victims.ts';
export { FAULTS, FAULT_KINDS, FAULT_ACTIONS, faultKindSchema, canDeliver, deliverableKinds, type FaultKind, type FaultAction, type FaultKindSpec } from './registry.ts';
export { injectFault, healFault, isFaultable, assertCanInject, refusal } from './inject.ts';
export { recoverAfterFault, summarizeRecovery, type RecoveryOutcome } from './recover.ts';
