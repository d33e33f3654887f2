// timeview.js - the time view page's script (embedded by cmake/embed.cmake; the C side is
// collector/render/timeview.c, which documents the data's layout). A heatmap of seconds
// (columns) by sub-second slices (rows); a drag selects a time range and the flame graph of
// that range is drawn below it, for the threads picked; shift-drag (or "Use as baseline")
// sets a second range, and the flame graph is then coloured by the difference between them.
// The page opens on the heatmap and the stack tree; the countings come in time blocks, each
// inflated and decoded the first time a selection needs it and kept (a block a selection
// covers whole is read summed, when the page has its sum).
"use strict";
(function () {
	const FRAME_H = 17, MIN_PX = 1; // narrower frames are not drawn
	const meta = JSON.parse(document.getElementById("fg-meta").textContent);
	const $ = (id) => document.getElementById(id);
	const esc = (s) => s.replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);
	const api = (window.fgTimeview = { ready: false, meta: meta, scriptAt: performance.now() });

	document.body.insertAdjacentHTML("beforeend",
		'<h1 id="title"></h1><div id="subtitle"></div>' +
		'<div class="bar"><label>colour by <select id="colour"><option value="w">' + esc(meta.unit === "samples" ? "samples" : meta.unit) +
		'</option><option value="n">countings</option></select></label>' +
		'<label>threads <select id="threads" multiple size="4"></select></label>' +
		'<button id="all-threads">all threads</button>' +
		'<span class="legend">drag: select a range; shift-drag: the baseline to compare with</span></div>' +
		'<div id="hm-wrap"><canvas id="heatmap"></canvas><div id="hm-tip"></div></div>' +
		'<div id="status">loading…</div>' +
		'<div class="bar"><button id="baseline">Use as baseline</button><button id="no-baseline">Clear baseline</button>' +
		'<button id="reset-zoom">Reset zoom</button><input id="search" placeholder="search (regex)" size="24">' +
		'<button id="search-btn">Search</button><button id="search-clear">Clear search</button><span id="matched"></span></div>' +
		'<div id="details">&nbsp;</div><div id="flame"></div><div id="error"></div>');
	$("title").textContent = meta.title;
	$("subtitle").textContent = meta.subtitle;
	window.addEventListener("error", (e) => { $("error").textContent = String(e.message); });

	// ---- data -----------------------------------------------------------------------------
	let frames, kinds, parent, frameOf, thr, nnodes, kidStart, kids, tree = null;
	const ROWS = meta.rows, CELL_US = meta.cell_us, NCOLS = meta.ncols, NCELLS = NCOLS * ROWS;
	const BCELLS = meta.block_cols * ROWS, NBLOCKS = meta.blocks;
	const CELL_H = ROWS >= 10 ? 8 : Math.floor(120 / ROWS);

	// count varints from buf at pos into out (one typed array type per call site: kept simple
	// so that the loop stays fast); returns the position after them
	function varints(buf, pos, out, count) {
		for (let i = 0; i < count; i++) {
			let b = buf[pos++];
			if (b < 128) { // most of them: one byte
				out[i] = b;
				continue;
			}
			let v = b & 0x7f, mul = 128;
			do {
				b = buf[pos++];
				v += (b & 0x7f) * mul;
				mul *= 128;
			} while (b & 0x80);
			out[i] = v;
		}
		return pos;
	}

	function varint(buf, pos, box) {
		let b = buf[pos++], v = b & 0x7f, mul = 128;
		while (b & 0x80) {
			b = buf[pos++];
			v += (b & 0x7f) * mul;
			mul *= 128;
		}
		box[0] = v;
		return pos;
	}

	function unbase64(id) {
		const b64 = document.getElementById(id).textContent;
		if (Uint8Array.fromBase64) return Uint8Array.fromBase64(b64); // skips the line breaks
		const bin = atob(b64); // skips the line breaks
		const out = new Uint8Array(bin.length);
		for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
		return out;
	}

	async function inflate(id) {
		const gz = unbase64(id);
		api.inflated = (api.inflated || 0) + 1;
		const ds = new Blob([gz]).stream().pipeThrough(new DecompressionStream("gzip"));
		return new Uint8Array(await new Response(ds).arrayBuffer());
	}

	let sorted;

	// node's children in name order (as flamegraph.pl draws them), sorted on first use
	function sortKids(n) {
		if (sorted[n] || kidStart[n + 1] - kidStart[n] < 2) return;
		const part = Array.from(kids.subarray(kidStart[n], kidStart[n + 1]));
		part.sort((a, b) => (frames[frameOf[a]] < frames[frameOf[b]] ? -1 : frames[frameOf[a]] > frames[frameOf[b]] ? 1 : 0));
		kids.set(part, kidStart[n]);
		sorted[n] = 1;
	}

	let cellW, cellN, allW, allN, tabs, treeGo;
	const treeRead = new Promise((res) => { treeGo = res; }).then(() => loadTree()); // once parsed

	// the head: the heatmap of all threads
	async function load() {
		const t0 = performance.now();
		// a small head comes as it is: read at once, before the rest of the page is parsed
		const buf = meta.head_gz ? await inflate("fg-data") : unbase64("fg-data");
		const tA = performance.now();
		allN = new Float64Array(NCELLS);
		allW = new Float64Array(NCELLS);
		varints(buf, varints(buf, 0, allN, NCELLS), allW, NCELLS);
		thr = [];
		let at = 0;
		for (const [tid, name, count] of meta.threads) {
			thr.push({ tid: tid, name: name, first: at, n: count });
			at += count;
		}
		api.loadParts = { head: tA - t0, decode: performance.now() - tA };
		const sel = $("threads");
		sel.innerHTML = thr.map((t, i) => '<option value="' + i + '">' + esc((t.name || "[tid " + t.tid + "]").replace(/_\[[a-z0-9]\]$/, "")) + " (" + t.tid + ", " + t.n + ")</option>").join("");
	}

	// the stack tree: frames, each node's parent and frame, each thread's stacks
	async function loadTree() {
		const t0 = performance.now();
		const buf = await inflate("fg-tree");
		const tA = performance.now();
		const jlen = buf[0] | (buf[1] << 8) | (buf[2] << 16) | (buf[3] * 16777216);
		frames = JSON.parse(new TextDecoder().decode(buf.subarray(4, 4 + jlen))).frames;
		let pos = 4 + jlen;
		nnodes = meta.nodes;
		const nv = new Uint32Array(2 * (nnodes - 1));
		pos = varints(buf, pos, nv, nv.length);
		parent = new Uint32Array(nnodes);
		frameOf = new Uint32Array(nnodes);
		for (let i = 1; i < nnodes; i++) {
			parent[i] = nv[2 * i - 2];
			frameOf[i] = nv[2 * i - 1];
		}
		tabs = [];
		const box = [0];
		for (let k = 0; k < thr.length; k++) {
			pos = varint(buf, pos, box);
			const tab = new Uint32Array(box[0]);
			pos = varints(buf, pos, tab, box[0]);
			tabs.push(tab);
		}
		kinds = frames.map((f) => (f.endsWith("_[j]") ? "j" : f.endsWith("_[i]") ? "i" : f.endsWith("_[k]") ? "k" : f.endsWith("_[0]") ? "0" : ""));
		// children of each node, by name (as flamegraph.pl sorts them)
		const cnt = new Uint32Array(nnodes + 1);
		for (let i = 1; i < nnodes; i++) cnt[parent[i] + 1]++;
		kidStart = new Uint32Array(nnodes + 1);
		for (let i = 0; i < nnodes; i++) kidStart[i + 1] = kidStart[i] + cnt[i + 1];
		kids = new Uint32Array(Math.max(nnodes - 1, 1));
		const fill = kidStart.slice(0, nnodes);
		for (let i = 1; i < nnodes; i++) kids[fill[parent[i]]++] = i;
		sorted = new Uint8Array(nnodes); // children put in name order when first drawn
		tree = true;
		api.eventParts = { inflate: tA - t0, decode: performance.now() - tA };
	}

	// ---- time blocks ----------------------------------------------------------------------
	// block k holds cells [k * BCELLS, (k + 1) * BCELLS): "s" its countings, per thread
	// {C: cells, N: nodes, W: weights or null}; "h" its sum, per thread {N: nodes, W: sums}
	const blocks = { s: new Map(), h: new Map() }, reading = { s: new Map(), h: new Map() };
	api.useSums = true; // for tests: false reads every block's countings
	api.blocksRead = { s: 0, h: 0 };

	function decodeBlock(kind, k, buf) {
		const nt = thr.length, cnt = new Uint32Array(nt), out = [];
		let pos = varints(buf, 0, cnt, nt);
		if (kind === "h") {
			for (let t = 0; t < nt; t++) {
				const N = new Uint32Array(cnt[t]), tab = tabs[t];
				pos = varints(buf, pos, N, cnt[t]);
				for (let i = 1; i < N.length; i++) N[i] += N[i - 1];
				for (let i = 0; i < N.length; i++) N[i] = tab[N[i]];
				out.push({ N: N, W: null });
			}
			for (let t = 0; t < nt; t++) {
				out[t].W = new Float64Array(cnt[t]);
				pos = varints(buf, pos, out[t].W, cnt[t]);
			}
			return out;
		}
		for (let t = 0; t < nt; t++) {
			const C = new Uint32Array(cnt[t]);
			pos = varints(buf, pos, C, cnt[t]);
			let c = k * BCELLS;
			for (let i = 0; i < C.length; i++) C[i] = c += C[i];
			out.push({ C: C, N: null, W: null });
		}
		for (let t = 0; t < nt; t++) {
			const N = new Uint32Array(cnt[t]), tab = tabs[t];
			pos = varints(buf, pos, N, cnt[t]);
			for (let i = 0; i < N.length; i++) N[i] = tab[N[i]];
			out[t].N = N;
		}
		if (!meta.unit_weights) {
			for (let t = 0; t < nt; t++) {
				out[t].W = new Float64Array(cnt[t]);
				pos = varints(buf, pos, out[t].W, cnt[t]);
			}
		}
		return out;
	}

	// block k's countings or sum, read once (a block without countings has no blob: null)
	function readBlock(kind, k) {
		let p = reading[kind].get(k);
		if (!p) {
			const id = "fg-" + kind + k;
			p = !document.getElementById(id) ? Promise.resolve(null) : inflate(id).then((buf) => {
				api.blocksRead[kind]++;
				return decodeBlock(kind, k, buf);
			});
			p = p.then((b) => {
				blocks[kind].set(k, b);
				return b;
			});
			reading[kind].set(k, p);
		}
		return p;
	}

	// what a range of cells [a, b) reads: [kind, block] for each block it meets, the sum of
	// those it covers whole where the page has one
	function need(range) {
		const out = [];
		if (!range) return out;
		const k0 = Math.floor(range[0] / BCELLS), k1 = Math.min(NBLOCKS - 1, Math.floor((range[1] - 1) / BCELLS));
		for (let k = k0; k <= k1; k++) {
			const whole = range[0] <= k * BCELLS && Math.min(NCELLS, (k + 1) * BCELLS) <= range[1];
			out.push([whole && api.useSums && document.getElementById("fg-h" + k) ? "h" : "s", k]);
		}
		return out;
	}

	const have = (list) => list.every(([kind, k]) => blocks[kind].has(k));
	const fetchAll = (list) => Promise.all(list.map(([kind, k]) => readBlock(kind, k)));
	const allCountings = () => Array.from({ length: NBLOCKS }, (_, k) => ["s", k]);

	// work in flight (blocks read, then drawn): settled() resolves when none is left
	let busy = 0;
	const waiters = [];
	function track(p) {
		busy++;
		const done = () => {
			if (--busy === 0) waiters.splice(0).forEach((f) => f());
		};
		return p.then(done, (e) => {
			done();
			$("error").textContent = "cannot read the profile: " + e;
		});
	}
	api.settled = () => (busy ? new Promise((res) => waiters.push(res)) : Promise.resolve());

	// ---- heatmap --------------------------------------------------------------------------
	let cw = 8, picked = null; // picked: thread indexes, null = all
	let sel = null, base = null, drag = null; // ranges of cells [a, b)
	const hm = () => $("heatmap");

	function activeThreads() {
		return picked ? picked : thr.map((_, i) => i);
	}

	// the picked threads' cells, from every block's countings (read before)
	function buildCells() {
		if (!picked) {
			cellW = allW;
			cellN = allN;
			return;
		}
		cellW = new Float64Array(NCELLS);
		cellN = new Float64Array(NCELLS);
		for (const b of blocks.s.values()) {
			if (!b) continue;
			for (const t of picked) {
				const { C, W } = b[t];
				for (let i = 0; i < C.length; i++) {
					cellW[C[i]] += W ? W[i] : 1;
					cellN[C[i]] += 1;
				}
			}
		}
	}

	function cellOf(ev) {
		const rect = hm().getBoundingClientRect();
		const x = ev.clientX - rect.left - 40, y = ev.clientY - rect.top - 4;
		const c = Math.min(NCOLS - 1, Math.max(0, Math.floor(x / cw)));
		const r = Math.min(ROWS - 1, Math.max(0, Math.floor(y / CELL_H)));
		return c * ROWS + r;
	}

	function rangeOf(k0, k1) {
		return [Math.min(k0, k1), Math.max(k0, k1) + 1];
	}

	// a cell's time: seconds since t0, or the UTC time of a rolling profile's interval
	const two = (x) => (x < 10 ? "0" : "") + x;
	function clock(unix) {
		const d = new Date(unix * 1000);
		return two(d.getUTCHours()) + ":" + two(d.getUTCMinutes()) + (meta.col_s % 60 ? ":" + two(d.getUTCSeconds()) : "");
	}
	function cellTime(k) {
		if (meta.columns) return clock(meta.columns[Math.min(NCOLS - 1, Math.floor(k / ROWS))] + (k >= NCELLS ? meta.col_s : 0));
		return ((k * CELL_US) / 1e6).toFixed(3) + " s";
	}

	let image = null; // the heatmap's cells, drawn once per colouring and thread pick

	function paintCells() {
		const cv = hm(), wrap = $("hm-wrap");
		cw = Math.max(1, Math.min(24, Math.floor((wrap.clientWidth - 50) / NCOLS)));
		cv.width = 40 + NCOLS * cw + 4;
		cv.height = ROWS * CELL_H + 22;
		const g = cv.getContext("2d");
		g.fillStyle = "#fff";
		g.fillRect(0, 0, cv.width, cv.height);
		const v = $("colour").value === "n" ? cellN : cellW;
		let max = 0;
		for (let i = 0; i < v.length; i++) if (v[i] > max) max = v[i];
		// every cell's pixels written at once (one fillRect per cell costs a style parse each)
		const w = NCOLS * cw, h = ROWS * CELL_H, img = g.createImageData(w, h);
		const px = new Uint32Array(img.data.buffer);
		const gap = cw > 3 ? 1 : 0;
		const empty = 0xfff4f4f4; // little-endian ABGR
		// a cell row's first line, column by column, then its copies down to the cell's height
		for (let r = 0; r < ROWS; r++) {
			const row = r * CELL_H * w;
			for (let c = 0; c < NCOLS; c++) {
				const x = v[c * ROWS + r];
				let rgba = empty;
				if (x > 0) {
					const f = Math.sqrt(x / max);
					rgba = (0xff000000 | (Math.round(215 - 200 * f) << 16) | (Math.round(235 - 200 * f) << 8) | Math.round(255 - 55 * f)) >>> 0;
				}
				for (let i = row + c * cw, end = i + cw - gap; i < end; i++) px[i] = rgba;
			}
			for (let yy = 1; yy < CELL_H - 1; yy++) px.copyWithin(row + yy * w, row, row + w);
		}
		image = img;
		g.fillStyle = "#333";
		g.font = "10px Verdana";
		if (ROWS > 1) for (let r = 0; r < ROWS; r += 10) g.fillText(r * (CELL_US / 1000) + "ms", 0, 4 + r * CELL_H + 8);
		const every = Math.max(1, Math.ceil((meta.columns ? 50 : 40) / cw));
		for (let c = 0; c < NCOLS; c += every) g.fillText(meta.columns ? clock(meta.columns[c]) : c + "s", 40 + c * cw, ROWS * CELL_H + 18);
	}

	// the cells, then the selection and the baseline over them
	function drawHeatmap() {
		const g = hm().getContext("2d");
		g.putImageData(image, 40, 4);
		for (const [r, style] of [[base, "rgba(0,170,90,0.45)"], [sel, "rgba(40,90,255,0.45)"]]) {
			if (!r) continue;
			g.fillStyle = style;
			const c0 = Math.floor(r[0] / ROWS), c1 = Math.floor((r[1] - 1) / ROWS);
			for (let c = c0; c <= c1; c++) {
				const a = c === c0 ? r[0] % ROWS : 0, b = c === c1 ? ((r[1] - 1) % ROWS) + 1 : ROWS;
				g.fillRect(40 + c * cw, 4 + a * CELL_H, cw, (b - a) * CELL_H);
			}
		}
	}

	function onHover(ev) {
		const k = cellOf(ev), tip = $("hm-tip");
		tip.style.display = "block";
		tip.style.left = ev.offsetX + 12 + "px";
		tip.style.top = ev.offsetY + 12 + "px";
		tip.textContent = cellTime(k) + ": " + fmt(cellW[k]) + " " + meta.unit + ", " + cellN[k] + " countings";
		if (drag) {
			drag.k1 = k;
			const r = rangeOf(drag.k0, drag.k1);
			if (drag.base) base = r;
			else sel = r;
			drawHeatmap();
		}
	}

	// ---- flame graph ----------------------------------------------------------------------
	let zoom = 0, tot = null, btot = null, selTotal = 0;

	// every node's total in a range of cells, for the threads picked (its blocks read before)
	function sum(range) {
		const self = new Float64Array(nnodes), active = activeThreads(), stop = range[1];
		for (const [kind, k] of need(range)) {
			const b = blocks[kind].get(k);
			if (!b) continue;
			for (const t of active) {
				const { C, N, W } = b[t];
				if (kind === "h") {
					for (let i = 0; i < N.length; i++) self[N[i]] += W[i];
					continue;
				}
				let lo = 0, hi = C.length;
				while (lo < hi) {
					const m = (lo + hi) >> 1;
					if (C[m] < range[0]) lo = m + 1;
					else hi = m;
				}
				const end = C.length;
				if (W) for (let i = lo; i < end && C[i] < stop; i++) self[N[i]] += W[i];
				else for (let i = lo; i < end && C[i] < stop; i++) self[N[i]] += 1;
			}
		}
		for (let i = nnodes - 1; i > 0; i--) self[parent[i]] += self[i];
		return self;
	}

	function fmt(x) {
		return x >= 1e6 ? (x / 1e6).toFixed(2) + "M" : x >= 1e4 ? (x / 1e3).toFixed(1) + "k" : String(Math.round(x * 100) / 100);
	}

	function hash(s) {
		let h = 0;
		for (let i = 0; i < s.length && i < 24; i++) h = (h * 31 + s.charCodeAt(i)) >>> 0;
		return (h % 1000) / 1000;
	}

	function colour(node) {
		const f = frameOf[node], name = frames[f], v = hash(name);
		if (btot) {
			const a = tot[node] / (tot[0] || 1), b = btot[node] / (btot[0] || 1), d = a - b;
			const s = Math.round(210 * (1 - Math.min(1, Math.abs(d) / diffMax)));
			return d > 0 ? "rgb(255," + s + "," + s + ")" : d < 0 ? "rgb(" + s + "," + s + ",255)" : "rgb(220,220,220)";
		}
		if (node === 0) return "rgb(200,200,200)";
		switch (kinds[f]) {
			case "j": return "rgb(" + Math.round(50 + 60 * v) + "," + Math.round(170 + 50 * v) + "," + Math.round(50 + 60 * v) + ")";
			case "i": return "rgb(" + Math.round(50 + 60 * v) + "," + Math.round(190 + 50 * v) + "," + Math.round(190 + 50 * v) + ")";
			case "k": return "rgb(" + Math.round(200 + 50 * v) + "," + Math.round(150 + 60 * v) + ",60)";
			case "0": return "rgb(" + Math.round(180 + 40 * v) + "," + Math.round(200 + 40 * v) + ",100)";
			default: return "rgb(" + Math.round(200 + 55 * v) + "," + Math.round(80 + 100 * v) + "," + Math.round(60 + 40 * v) + ")";
		}
	}

	let diffMax = 1, searchRe = null;

	const label = (node) => (node === 0 ? "all" : frames[frameOf[node]]);

	let drawn = [], drawnH = 0; // the frames drawn: [node, depth, x, width, ancestor of the zoom, fill]

	function titleOf(n) {
		const pct = selTotal ? (100 * tot[n]) / selTotal : 0;
		let title = label(n) + " (" + fmt(tot[n]) + " " + meta.unit + ", " + pct.toFixed(2) + "%";
		if (btot) {
			const dd = 100 * (tot[n] / (tot[0] || 1) - btot[n] / (btot[0] || 1));
			title += ", " + (dd >= 0 ? "+" : "") + dd.toFixed(2) + " points against the baseline";
		}
		return title + ")";
	}

	let flameGen = 0;

	// the flame graph of the selection, drawn now when its blocks are read, else once they
	// are (a later selection's wins); a promise of its drawing
	function drawFlame() {
		const t0 = performance.now(), gen = ++flameGen;
		if (!sel) {
			$("flame").innerHTML = "";
			drawn = [];
			return Promise.resolve();
		}
		if (tree && have(need(sel).concat(need(base)))) {
			drawFlameNow(t0);
			return Promise.resolve();
		}
		status();
		return track(treeRead.then(() => fetchAll(need(sel).concat(need(base)))).then(() => {
			if (gen === flameGen) drawFlameNow(t0);
		}));
	}

	// the flame graph of the selection, on a canvas: one fillRect per frame, text where it fits
	function drawFlameNow(t0) {
		const tR = performance.now();
		const box = $("flame");
		tot = sum(sel);
		const t1 = performance.now();
		btot = base ? sum(base) : null;
		selTotal = tot[0];
		if (btot) {
			diffMax = 1e-9;
			for (let i = 0; i < nnodes; i++) {
				const d = Math.abs(tot[i] / (tot[0] || 1) - btot[i] / (btot[0] || 1));
				if (d > diffMax) diffMax = d;
			}
		}
		const width = Math.max(200, box.clientWidth - 2);
		let maxDepth = 0, matched = 0;
		const path = [];
		for (let n = zoom; n !== 0; n = parent[n]) path.push(n);
		path.push(0);
		path.reverse(); // root .. zoom
		const zt = tot[zoom] || 0;
		const items = [];
		path.forEach((n, d) => { if (tot[n] > 0) items.push([n, d, 0, width, n !== zoom, ""]); });
		const scale = zt > 0 ? width / zt : 0;
		const stack = zt > 0 ? [[zoom, path.length - 1, 0]] : [];
		while (stack.length) {
			const [n, d, x] = stack.pop();
			if (n !== zoom) items.push([n, d, x, tot[n] * scale, false, ""]);
			let cx = x;
			sortKids(n);
			for (let k = kidStart[n]; k < kidStart[n + 1]; k++) {
				const c = kids[k], w = tot[c] * scale;
				if (w >= MIN_PX) stack.push([c, d + 1, cx]);
				cx += w;
			}
		}
		for (const it of items) if (it[1] > maxDepth) maxDepth = it[1];
		const height = (maxDepth + 1) * FRAME_H + 4;
		const t2 = performance.now();
		let cv = $("flame-cv");
		if (!cv) {
			box.innerHTML = '<canvas id="flame-cv"></canvas>';
			cv = $("flame-cv");
		}
		const dpr = window.devicePixelRatio || 1;
		cv.width = Math.round(width * dpr);
		cv.height = Math.round(height * dpr);
		cv.style.width = width + "px";
		cv.style.height = height + "px";
		cv.dataset.total = selTotal;
		const g = cv.getContext("2d");
		g.setTransform(dpr, 0, 0, dpr, 0, 0);
		g.font = "12px Verdana, sans-serif";
		g.textBaseline = "alphabetic";
		for (const it of items) {
			const [n, d, x, w, anc] = it;
			const name = label(n), y = height - (d + 1) * FRAME_H;
			const hit = searchRe && n !== 0 && searchRe.test(name);
			if (hit) {
				let under = false;
				for (let p = parent[n]; p !== 0; p = parent[p]) if (searchRe.test(label(p))) { under = true; break; }
				if (!under) matched += tot[n];
			}
			it[5] = hit ? "rgb(230,0,230)" : colour(n);
			g.globalAlpha = anc ? 0.6 : 1;
			g.fillStyle = it[5];
			g.fillRect(x, y, Math.max(0.1, w), FRAME_H - 1);
			const chars = Math.floor((w - 6) / 7);
			if (chars >= 3) {
				g.globalAlpha = 1;
				g.fillStyle = "#000";
				g.fillText(name.length <= chars ? name : name.slice(0, chars - 2) + "..", x + 3, y + 12);
			}
		}
		g.globalAlpha = 1;
		drawn = items;
		drawnH = height;
		$("matched").textContent = searchRe ? "Matched: " + (selTotal ? ((100 * matched) / (tot[zoom] || 1)).toFixed(1) : "0.0") + "%" : "";
		status();
		api.redrawMs = performance.now() - t0;
		api.redrawParts = { read: tR - t0, sum: t1 - tR, layout: t2 - t1, draw: performance.now() - t2, frames: items.length };
	}

	// the frame drawn under a mouse event on the flame graph, or null
	function frameAt(ev) {
		const r = $("flame-cv").getBoundingClientRect(), x = ev.clientX - r.left, y = ev.clientY - r.top;
		const d = Math.ceil((drawnH - y) / FRAME_H) - 1;
		for (const it of drawn) if (it[1] === d && x >= it[2] && x < it[2] + Math.max(1, it[3])) return it;
		return null;
	}

	function status() {
		let s = sel ? "selection " + cellTime(sel[0]) + " – " + cellTime(sel[1]) + ": " + fmt(selTotal) + " " + meta.unit : "drag across the heatmap to select a time range";
		if (sel && !(tree && have(need(sel).concat(need(base))))) s = "reading the countings…";
		else if (base) s += " | baseline " + cellTime(base[0]) + " – " + cellTime(base[1]) + ": " + fmt(btot ? btot[0] : 0) + " " + meta.unit + " (red: more than in the baseline, blue: less)";
		if (meta.untimed) s += " | " + meta.untimed + " countings without a time left out";
		$("status").textContent = s;
	}

	// ---- wiring ---------------------------------------------------------------------------
	let cellsGen = 0;

	// the heatmap of the threads picked (every block's countings read first) and the flame
	// graph; a promise of its drawing
	function redrawAll() {
		const gen = ++cellsGen, now = () => {
			buildCells();
			paintCells();
			drawHeatmap();
			return drawFlame();
		};
		if (!picked) return now();
		return track(treeRead.then(() => fetchAll(allCountings())).then(() => (gen === cellsGen ? now() : null)));
	}

	function wire() {
		const cv = hm();
		cv.addEventListener("mousedown", (ev) => {
			const k = cellOf(ev);
			drag = { k0: k, k1: k, base: ev.shiftKey };
			if (drag.base) base = rangeOf(k, k);
			else sel = rangeOf(k, k);
			ev.preventDefault();
			drawHeatmap();
		});
		cv.addEventListener("mousemove", onHover);
		cv.addEventListener("mouseleave", () => { $("hm-tip").style.display = "none"; });
		window.addEventListener("mouseup", () => {
			if (!drag) return;
			drag = null;
			zoom = 0;
			drawHeatmap();
			drawFlame();
		});
		$("colour").addEventListener("change", () => { paintCells(); drawHeatmap(); });
		$("threads").addEventListener("change", () => {
			const o = Array.from($("threads").selectedOptions).map((x) => Number(x.value));
			picked = o.length ? o : null;
			redrawAll();
		});
		$("all-threads").addEventListener("click", () => {
			for (const o of $("threads").options) o.selected = false;
			picked = null;
			redrawAll();
		});
		$("baseline").addEventListener("click", () => { base = sel; drawHeatmap(); drawFlame(); });
		$("no-baseline").addEventListener("click", () => { base = null; drawHeatmap(); drawFlame(); });
		$("reset-zoom").addEventListener("click", () => { zoom = 0; drawFlame(); });
		const search = () => {
			const v = $("search").value;
			try {
				searchRe = v ? new RegExp(v) : null;
			} catch (e) {
				searchRe = null;
				$("matched").textContent = "bad regex";
				return;
			}
			drawFlame();
		};
		$("search-btn").addEventListener("click", search);
		$("search").addEventListener("keydown", (ev) => { if (ev.key === "Enter") search(); });
		$("search-clear").addEventListener("click", () => { $("search").value = ""; searchRe = null; drawFlame(); });
		const box = $("flame");
		box.addEventListener("click", (ev) => {
			const it = ev.target.id === "flame-cv" && frameAt(ev);
			if (!it) return;
			zoom = it[0];
			drawFlame();
		});
		box.addEventListener("mousemove", (ev) => {
			const it = ev.target.id === "flame-cv" && frameAt(ev);
			$("details").textContent = it ? titleOf(it[0]) : "\u00a0";
		});
		window.addEventListener("resize", () => { paintCells(); drawHeatmap(); drawFlame(); });
	}

	const toCells = (a, b) => [Math.max(0, Math.floor((a * 1e6) / CELL_US)), Math.max(1, Math.ceil((b * 1e6) / CELL_US))];
	api.select = (a, b, asBase) => { // seconds since t0; for scripts: a promise of the drawing
		if (asBase) base = toCells(a, b);
		else sel = toCells(a, b);
		zoom = 0;
		drawHeatmap();
		return drawFlame();
	};
	api.selectCells = (k0, k1, asBase) => { // cells [k0, k1); for scripts, as select
		if (asBase) base = [k0, k1];
		else sel = [k0, k1];
		zoom = 0;
		drawHeatmap();
		return drawFlame();
	};
	api.cellRect = (col, row) => { // where a cell is drawn, in client coordinates
		const r = hm().getBoundingClientRect();
		return { x: r.left + 40 + col * cw + cw / 2, y: r.top + 4 + row * CELL_H + CELL_H / 2 };
	};
	// the flame graph drawn, for scripts: its total and each frame as [node, parent, value,
	// title, fill], and where a frame of that name is drawn (client coordinates of its middle)
	api.frames = () => ({ total: selTotal, frames: drawn.map((it) => [it[0], it[0] ? parent[it[0]] : -1, tot[it[0]], titleOf(it[0]), it[5]]) });
	api.frameRect = (name) => {
		const it = drawn.find((f) => label(f[0]) === name);
		if (!it) return null;
		const r = $("flame-cv").getBoundingClientRect();
		return { x: r.left + it[2] + Math.max(1, it[3]) / 2, y: r.top + drawnH - (it[1] + 1) * FRAME_H + FRAME_H / 2, width: it[3], full: r.width };
	};
	api.cellCounts = () => Array.from(cellN); // the heatmap's countings, cell by cell
	api.blocks = NBLOCKS;
	api.rows = ROWS;
	api.seconds = NCOLS;
	api.duration = meta.duration_us / 1e6; // seconds from the first counting to the last

	// the heatmap first (its cells came with the head, and this script comes before the
	// other blobs), painted, then the stack tree once the document is parsed; the countings
	// when a selection needs them
	const afterPaint = () => new Promise((res) => requestAnimationFrame(() => setTimeout(res, 0)));
	const parsed = () => new Promise((res) => {
		if (document.readyState !== "loading") res();
		else document.addEventListener("DOMContentLoaded", () => res(), { once: true });
	});
	const started = performance.now();
	load().then(() => {
		wire();
		const t = performance.now();
		cellW = allW;
		cellN = allN;
		paintCells();
		drawHeatmap();
		api.loadParts.draw = performance.now() - t;
		status();
		api.shownAt = performance.now(); // since the navigation began
		api.shownBeforeCountings = !document.getElementById("fg-tree");
		api.shownMs = api.shownAt - started;
		return afterPaint();
	}).then(() => {
		api.paintedAt = performance.now();
		return parsed();
	}).then(() => {
		treeGo(); // a selection or thread pick made before waits for it
		return treeRead;
	}).then(() => {
		status();
		api.loadMs = performance.now() - started;
		api.readyAt = performance.now();
		api.ready = true;
	}).catch((e) => {
		$("error").textContent = "cannot read the profile: " + e;
		throw e;
	});
})();
