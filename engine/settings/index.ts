// The settings registry: value types (values.ts), the table (registry.ts), the reference (reference.ts).
export * from './values.ts';
export * from './registry.ts';
export * from './reference.ts';
export * from './setting-flags.ts';
