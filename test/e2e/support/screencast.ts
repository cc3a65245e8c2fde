/**
 * A short video of what the browser shows, from Chromium's own screencast (DevTools
 * `Page.startScreencast`: a JPEG each time the page repaints) and Debian's ffmpeg. Recording
 * can pause between the scenes that make the video; a still stretch (n8n working, a wait)
 * is shortened to at most `MAX_STILL_SECONDS`, so the video shows what changed. Captions
 * (support/captions.ts) are drawn into the page and also written as a WebVTT track, timed
 * by the pictures each one was on.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import type { CDPSession, Page } from 'playwright-core';

import { installCaptionBar, showCaption, webVtt, type Cue } from './captions';

const MAX_STILL_SECONDS = 1.5;
/** How long the last picture of each scene stays on screen. */
const SCENE_END_SECONDS = 2;
/** Each caption stays on screen at least this long, time to read it. */
const MIN_CAPTION_SECONDS = 3;

interface Frame {
	file: string;
	/** Seconds this picture stays on screen. */
	seconds: number;
	/** At least this long, whatever the still stretch (`hold`). */
	hold: number;
	/** The caption the page showed. */
	caption: string;
}

export interface Screencast {
	/** Starts (or goes on) recording: a new scene. */
	record(): Promise<void>;
	/** Stops recording until `record` is called again, and takes the caption away. */
	pause(): Promise<void>;
	/** Shows a caption from now on (burned into the picture, and a cue of the WebVTT track). */
	caption(text: string): Promise<void>;
	/** Keeps what the page shows now on screen at least this long (a still stretch is otherwise cut short). */
	hold(seconds: number): void;
	/**
	 * Writes the video (H.264, MP4) and, when named, its captions (WebVTT); answers the video's
	 * length in seconds, its size in bytes and the caption cues.
	 */
	save(file: string, options: { maxSeconds: number; captions?: string }): { seconds: number; bytes: number; cues: Cue[] };
}

export async function screencast(page: Page, workDir: string): Promise<Screencast> {
	rmSync(workDir, { recursive: true, force: true });
	mkdirSync(workDir, { recursive: true });
	const cdp: CDPSession = await page.context().newCDPSession(page);
	const frames: Frame[] = [];
	let last: { frame: Frame; at: number } | undefined;
	let recording = false;
	let caption = '';
	await installCaptionBar(page);

	cdp.on('Page.screencastFrame', ({ data, metadata, sessionId }) => {
		void cdp.send('Page.screencastFrameAck', { sessionId }).catch(() => undefined);
		if (!recording) return;
		const at = metadata.timestamp ?? Date.now() / 1000;
		if (last) last.frame.seconds = Math.min(Math.max(at - last.at, 0.04), MAX_STILL_SECONDS);
		const frame = { file: join(workDir, `frame-${String(frames.length).padStart(5, '0')}.jpg`), seconds: SCENE_END_SECONDS, hold: 0, caption };
		writeFileSync(frame.file, Buffer.from(data, 'base64'));
		frames.push(frame);
		last = { frame, at };
	});

	const setCaption = async (text: string) => {
		caption = text;
		await showCaption(page, text);
	};

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
			await setCaption('');
		},
		caption: setCaption,
		hold(seconds) {
			if (last) last.frame.hold = Math.max(last.frame.hold, seconds);
		},
		save(file, { maxSeconds, captions }) {
			if (frames.length === 0) throw new Error('The screencast recorded no picture');
			const shown = frames.map((frame) => Math.max(frame.seconds, frame.hold));
			// A caption on screen too briefly to read: its last picture stays longer.
			for (let start = 0; start < frames.length; ) {
				let end = start;
				while (end + 1 < frames.length && frames[end + 1].caption === frames[start].caption) end++;
				const span = shown.slice(start, end + 1).reduce((sum, seconds) => sum + seconds, 0);
				if (frames[start].caption && span < MIN_CAPTION_SECONDS) shown[end] += MIN_CAPTION_SECONDS - span;
				start = end + 1;
			}
			const total = shown.reduce((sum, seconds) => sum + seconds, 0);
			// Longer than allowed: every picture shown proportionally shorter.
			const scale = total > maxSeconds ? maxSeconds / total : 1;
			const durations = shown.map((seconds) => Number((seconds * scale).toFixed(3)));
			const cues: Cue[] = [];
			let at = 0;
			frames.forEach((frame, index) => {
				const end = at + durations[index];
				const previous = cues[cues.length - 1];
				if (frame.caption && previous?.text === frame.caption && Math.abs(previous.end - at) < 0.001) previous.end = end;
				else if (frame.caption) cues.push({ start: at, end, text: frame.caption });
				at = end;
			});
			if (captions) writeFileSync(captions, webVtt(cues));
			const list = join(workDir, 'frames.txt');
			const lines = frames.flatMap((frame, index) => [`file '${frame.file}'`, `duration ${durations[index].toFixed(3)}`]);
			// The concat reader takes the last duration only when the file is named once more.
			writeFileSync(list, [...lines, `file '${frames[frames.length - 1].file}'`, ''].join('\n'));
			execFileSync(
				'ffmpeg',
				['-y', '-loglevel', 'error', '-f', 'concat', '-safe', '0', '-i', list,
					'-vf', 'fps=10,scale=1280:-2,format=yuv420p', '-c:v', 'libx264', '-preset', 'veryfast', '-crf', '32', '-movflags', '+faststart', file],
				{ stdio: ['ignore', 'ignore', 'pipe'], timeout: 5 * 60_000 },
			);
			const probed = execFileSync('ffprobe', ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', file], { encoding: 'utf8' });
			return { seconds: Number(probed.trim()), bytes: statSync(file).size, cues };
		},
	};
}
