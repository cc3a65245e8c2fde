/** The machine and software the figures come from. */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

export interface MachineInfo {
	cpus: string;
	cpuModel: string;
	memory: string;
	os: string;
	benchNode: string;
	n8nNode: string;
}

function firstMatch(file: string, pattern: RegExp): string | undefined {
	try {
		return pattern.exec(readFileSync(file, 'utf8'))?.[1]?.trim();
	} catch {
		return undefined;
	}
}

function run(command: string, args: string[]): string | undefined {
	try {
		return execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
	} catch {
		return undefined;
	}
}

export function machineInfo(n8nNodeBin: string): MachineInfo {
	const memKb = Number(firstMatch('/proc/meminfo', /^MemTotal:\s+(\d+)/m));
	return {
		cpus: run('nproc', []) ?? String(availableParallelism()),
		cpuModel: firstMatch('/proc/cpuinfo', /^model name\s*:\s*(.+)$/m) ?? 'unknown',
		memory: Number.isFinite(memKb) ? `${(memKb / 1024 / 1024).toFixed(1)} GiB` : 'unknown',
		os: run('uname', ['-sr']) ?? process.platform,
		benchNode: process.version,
		n8nNode: run(n8nNodeBin, ['--version']) ?? 'unknown',
	};
}
