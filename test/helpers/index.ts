/** The n8n test harness: see README.md beside this file. */
export * from './credentials-helper';
export * from './credential-test';
export * from './n8n-runtime';
export * from './run-node';
export * from './secrets';
export * from './trigger';
export { BINARY_DATA_FOLDER, N8N_TEST_FOLDER, ensureN8nCore } from './n8n-env';
export { forgetProcessMemory } from '../../credentials/ClinicProcessMemory';
export * from './probe';
export * from './list-search';
export * from './poll';
