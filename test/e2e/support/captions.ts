/**
 * Captions for the demo video, drawn by the page itself: a bar at the bottom of the window
 * that Chromium's screencast captures like the rest of the page (no font setup for ffmpeg).
 * The text lives in the tab's sessionStorage, so the bar comes back after every navigation.
 * The same captions are written as a WebVTT track from the times they were on screen.
 */
import type { Page } from 'playwright-core';

const BAR_ID = 'clinic-demo-caption';
const STORAGE_KEY = 'clinic-demo-caption';

/** CSS that hides the bar, for screenshots taken while a caption is on. */
export const CAPTION_HIDDEN = `#${BAR_ID} { display: none !important; }`;

/** The little of the page's DOM the bar needs (the tests compile without DOM types). */
interface BarElement {
	id: string;
	textContent: string | null;
	style: { cssText: string };
	remove(): void;
}
interface PageGlobals {
	document: {
		getElementById(id: string): BarElement | null;
		createElement(tag: string): BarElement;
		documentElement: { appendChild(element: BarElement): void };
	};
	sessionStorage: { getItem(key: string): string | null; setItem(key: string, value: string): void; removeItem(key: string): void };
}

/**
 * Runs in the page: shows `text` in the bar (creating it when missing), or removes the bar
 * when `text` is empty. Self-contained, so it can be sent as an init script too.
 */
function drawCaption(id: string, key: string, given: string | null): void {
	const { document: doc, sessionStorage: storage } = globalThis as unknown as PageGlobals;
	const text: string = given ?? storage.getItem(key) ?? '';
	if (given !== null) {
		if (text) storage.setItem(key, text);
		else storage.removeItem(key);
	}
	let bar = doc.getElementById(id);
	if (!text) {
		bar?.remove();
		return;
	}
	if (!bar) {
		bar = doc.createElement('div');
		bar.id = id;
		// Above everything, and never in the way of a click.
		bar.style.cssText = [
			'position:fixed', 'left:50%', 'bottom:56px', 'transform:translateX(-50%)', 'z-index:2147483647',
			'max-width:88%', 'padding:10px 22px', 'border-radius:10px', 'pointer-events:none',
			'background:rgba(20,20,28,0.86)', 'color:#fff', 'box-shadow:0 4px 18px rgba(0,0,0,0.35)',
			'font:600 21px/1.35 "DejaVu Sans",Arial,sans-serif', 'text-align:center', 'white-space:pre-line',
		].join(';');
		doc.documentElement.appendChild(bar);
	}
	bar.textContent = text;
}

/** Puts the bar back on every page the tab loads, with the caption last shown. */
export async function installCaptionBar(page: Page): Promise<void> {
	const call = `(${drawCaption.toString()})(${JSON.stringify(BAR_ID)}, ${JSON.stringify(STORAGE_KEY)}, null)`;
	await page.addInitScript({
		content: `document.readyState === 'loading' ? document.addEventListener('DOMContentLoaded', () => ${call}) : ${call};`,
	});
}

/** Shows `text` at once (an empty text takes the bar away). */
export async function showCaption(page: Page, text: string): Promise<void> {
	await page.evaluate(`(${drawCaption.toString()})(${JSON.stringify(BAR_ID)}, ${JSON.stringify(STORAGE_KEY)}, ${JSON.stringify(text)})`);
}

export interface Cue {
	start: number;
	end: number;
	text: string;
}

const timestamp = (seconds: number): string => {
	const ms = Math.round(seconds * 1000);
	const pad = (value: number, width = 2) => String(value).padStart(width, '0');
	return `${pad(Math.floor(ms / 3_600_000))}:${pad(Math.floor(ms / 60_000) % 60)}:${pad(Math.floor(ms / 1000) % 60)}.${pad(ms % 1000, 3)}`;
};

/** A WebVTT file of these cues. */
export function webVtt(cues: Cue[]): string {
	const blocks = cues.map((cue, index) => `${index + 1}\n${timestamp(cue.start)} --> ${timestamp(cue.end)}\n${cue.text}`);
	return ['WEBVTT', ...blocks].join('\n\n') + '\n';
}
