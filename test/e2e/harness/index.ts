/**
 * End-to-end harness: real n8n (1.123 and 2.41, on Node 24 from the npm registry, cached
 * outside the repo by scripts/install-n8n.sh), run as child processes of jest.
 *
 *   install.ts   ensureN8n(version), packRepository(dir), N8N_VERSIONS
 *   env.ts       n8nEnv(version, userFolder, port, options), getFreePort()
 *   package.ts   installPackage(userFolder, tarball): as n8n's Community Nodes screen does
 *   context.ts   createN8nContext(options) -> N8nContext (temp folder, logs, port, processes)
 *   cli.ts       importCredentials, importWorkflow(s), executeWorkflow, nodeItems/nodeJson
 *   restImport.ts restImportCredentials, restImportWorkflows: into a running n8n, no CLI run
 *   manualRun.ts runManually(server, id): a run from the Manual Trigger in a running n8n
 *   waitFor.ts   waitFor(what, check): bounded polling
 *   executions.ts Execution, readExecutionsWhen(server, id, …): listed without data, read once
 *   server.ts    startN8n(ctx) -> N8nServer: owner, API key, activate/deactivate,
 *                publication status, executions, webhooks
 *   jest.ts      useN8nContext(options): beforeAll/afterAll + logs on failure
 *   laneServer.ts one n8n a version shared by a lane's test files (useClinicN8n's laneServer)
 *   services.ts  startQueueServices(): PostgreSQL + Redis (given, private, or installed)
 *   queue.ts     enableQueueMode(ctx), startQueueCluster(ctx): main + workers + webhook processors
 *   registry.ts  startLocalRegistry(dir): verdaccio without uplinks; retagTarball(tarball, version)
 *   release.ts   previousRelease(), packRelease(release): the last release built from its commit (cached)
 */
export * from './install';
export * from './env';
export * from './package';
export * from './context';
export * from './cli';
export * from './restImport';
export * from './waitFor';
export * from './executions';
export * from './server';
export * from './manualRun';
export * from './jest';
export { tailFile } from './processes';
export * from './services';
export * from './queue';
export * from './registry';
export * from './release';
