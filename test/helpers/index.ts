/** The n8n test harness: see README.md beside this file. */
export * from './credentialsHelper';
export * from './credentialTest';
export * from './n8nRuntime';
export * from './runNode';
export * from './secrets';
export * from './trigger';
export { BINARY_DATA_FOLDER, N8N_TEST_FOLDER, ensureN8nCore } from './n8nEnv';
export { forgetProcessMemory } from '../../credentials/ClinicProcessMemory';
export * from './probe';
export * from './listSearch';
export * from './poll';
