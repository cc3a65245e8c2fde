/** The Clinic Trigger's record of what ran in n8n 2.x's model: simulation/suite.ts (`SIM_SEED`, `SIM_SCHEDULES`). */
import { describeSimulation } from './simulation/suite';

describeSimulation(2);
