/**
 * A short video of what the browser shows, from Chromium's own screencast (DevTools
 * `Page.startScreencast`: a JPEG each time the page repaints) and Debian's ffmpeg. Recording
 * can pause between the scenes that make the video; a still stretch (n8n working, a wait)
 * is shortened to at most `MAX_STILL_SECONDS`, so the video shows what changed.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import type { CDPSession, Page } from 'playwright-core';

const MAX_STILL_SECONDS = 1.5;
/** How long the last picture of each scene stays on screen. */
const SCENE_END_SECONDS = 2;

interface Frame {
	file: string;
	/** Seconds this picture stays on screen. */
	seconds: number;
}

export interface Screencast {
	/** Starts (or goes on) recording: a new scene. */
	record(): Promise<void>;
	/** Stops recording until `record` is called again. */
	pause(): Promise<void>;
	/** Writes the video (H.264, MP4) and answers its length in seconds and size in bytes. */
	save(file: string, options: { maxSeconds: number }): { seconds: number; bytes: number };
}

export async function screencast(page: Page, workDir: string): Promise<Screencast> {
	rmSync(workDir, { recursive: true, force: true });
	mkdirSync(workDir, { recursive: true });
	const cdp: CDPSession = await page.context().newCDPSession(page);
	const frames: Frame[] = [];
	let last: { frame: Frame; at: number } | undefined;
	let recording = false;

	cdp.on('Page.screencastFrame', ({ data, metadata, sessionId }) => {
		void cdp.send('Page.screencastFrameAck', { sessionId }).catch(() => undefined);
		if (!recording) return;
		const at = metadata.timestamp ?? Date.now() / 1000;
		if (last) last.frame.seconds = Math.min(Math.max(at - last.at, 0.04), MAX_STILL_SECONDS);
		const frame = { file: join(workDir, `frame-${String(frames.length).padStart(5, '0')}.jpg`), seconds: SCENE_END_SECONDS };
		writeFileSync(frame.file, Buffer.from(data, 'base64'));
		frames.push(frame);
		last = { frame, at };
	});

	return {
		async record() {
			if (recording) return;
			recording = true;
			last = undefined;
			await cdp.send('Page.startScreencast', { format: 'jpeg', quality: 70, maxWidth: 1280, maxHeight: 800 });
		},
		async pause() {
			if (!recording) return;
			await cdp.send('Page.stopScreencast');
			recording = false;
			if (last) last.frame.seconds = SCENE_END_SECONDS;
		},
		save(file, { maxSeconds }) {
			if (frames.length === 0) throw new Error('The screencast recorded no picture');
			const total = frames.reduce((sum, frame) => sum + frame.seconds, 0);
			// Longer than allowed: every picture shown proportionally shorter.
			const scale = total > maxSeconds ? maxSeconds / total : 1;
			const list = join(workDir, 'frames.txt');
			const lines = frames.flatMap((frame) => [`file '${frame.file}'`, `duration ${(frame.seconds * scale).toFixed(3)}`]);
			// The concat reader takes the last duration only when the file is named once more.
			writeFileSync(list, [...lines, `file '${frames[frames.length - 1].file}'`, ''].join('\n'));
			execFileSync(
				'ffmpeg',
				['-y', '-loglevel', 'error', '-f', 'concat', '-safe', '0', '-i', list,
					'-vf', 'fps=10,scale=1280:-2,format=yuv420p', '-c:v', 'libx264', '-preset', 'veryfast', '-crf', '32', '-movflags', '+faststart', file],
				{ stdio: ['ignore', 'ignore', 'pipe'], timeout: 5 * 60_000 },
			);
			const probed = execFileSync('ffprobe', ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', file], { encoding: 'utf8' });
			return { seconds: Number(probed.trim()), bytes: statSync(file).size };
		},
	};
}
