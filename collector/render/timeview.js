// timeview.js - the time view page's script (embedded by cmake/embed.cmake; the C side is
// collector/render/timeview.c, which documents the data's layout). A heatmap of seconds
// (columns) by sub-second slices (rows); a drag selects a time range and the flame graph of
// that range is drawn below it, for the threads picked; shift-drag (or "Use as baseline")
// sets a second range, and the flame graph is then coloured by the difference between them.
"use strict";
(function () {
	const ROWS = 50; // slices of a second: 20 ms each
	const CELL_H = 8, FRAME_H = 17, MIN_PX = 1; // narrower frames are not drawn
	const meta = JSON.parse(document.getElementById("fg-meta").textContent);
	const $ = (id) => document.getElementById(id);
	const esc = (s) => s.replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);
	const api = (window.fgTimeview = { ready: false, meta: meta });

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
	let frames, kinds, parent, frameOf, T, N, W, thr, nnodes, kidStart, kids, dur;

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

	let sorted;

	// node's children in name order (as flamegraph.pl draws them), sorted on first use
	function sortKids(n) {
		if (sorted[n] || kidStart[n + 1] - kidStart[n] < 2) return;
		const part = Array.from(kids.subarray(kidStart[n], kidStart[n + 1]));
		part.sort((a, b) => (frames[frameOf[a]] < frames[frameOf[b]] ? -1 : frames[frameOf[a]] > frames[frameOf[b]] ? 1 : 0));
		kids.set(part, kidStart[n]);
		sorted[n] = 1;
	}

	async function load() {
		const t0 = performance.now();
		const b64 = document.getElementById("fg-data").textContent;
		let gz;
		if (Uint8Array.fromBase64) {
			gz = Uint8Array.fromBase64(b64); // skips the line breaks
		} else {
			const bin = atob(b64); // so does atob
			gz = new Uint8Array(bin.length);
			for (let i = 0; i < bin.length; i++) gz[i] = bin.charCodeAt(i);
		}
		const tA = performance.now();
		const ds = new Blob([gz]).stream().pipeThrough(new DecompressionStream("gzip"));
		const buf = new Uint8Array(await new Response(ds).arrayBuffer());
		const tB = performance.now();
		const jlen = buf[0] | (buf[1] << 8) | (buf[2] << 16) | (buf[3] * 16777216);
		frames = JSON.parse(new TextDecoder().decode(buf.subarray(4, 4 + jlen))).frames;
		let pos = 4 + jlen;
		nnodes = meta.nodes;
		const nv = new Float64Array(2 * (nnodes - 1));
		pos = varints(buf, pos, nv, nv.length);
		parent = new Uint32Array(nnodes);
		frameOf = new Uint32Array(nnodes);
		for (let i = 1; i < nnodes; i++) {
			parent[i] = nv[2 * i - 2];
			frameOf[i] = nv[2 * i - 1];
		}
		const n = meta.events;
		T = new Float64Array(n); // microseconds since t0
		N = new Uint32Array(n);
		W = new Float64Array(n);
		pos = varints(buf, pos, T, n);
		thr = [];
		let at = 0;
		dur = 0;
		for (const [tid, name, count] of meta.threads) {
			for (let i = at + 1; i < at + count; i++) T[i] += T[i - 1];
			for (let i = at; i < at + count; i++) T[i] *= meta.tick_us;
			if (count) dur = Math.max(dur, T[at + count - 1]);
			thr.push({ tid: tid, name: name, first: at, n: count });
			at += count;
		}
		const tabs = [];
		for (const t of thr) {
			const cnt = new Float64Array(1);
			pos = varints(buf, pos, cnt, 1);
			const tab = new Uint32Array(cnt[0]);
			pos = varints(buf, pos, tab, cnt[0]);
			tabs.push(tab);
		}
		pos = varints(buf, pos, N, n); // each thread's own stack index ...
		thr.forEach((t, k) => {
			for (let i = t.first; i < t.first + t.n; i++) N[i] = tabs[k][N[i]]; // ... to a node
		});
		pos = varints(buf, pos, W, n);
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
		api.loadParts = { base64: tA - t0, inflate: tB - tA, decode: performance.now() - tB };
		const sel = $("threads");
		sel.innerHTML = thr.map((t, i) => '<option value="' + i + '">' + esc((t.name || "[tid " + t.tid + "]").replace(/_\[[a-z0-9]\]$/, "")) + " (" + t.tid + ", " + t.n + ")</option>").join("");
	}

	// ---- heatmap --------------------------------------------------------------------------
	let ncols = 1, cw = 8, cellW, cellN, picked = null; // picked: thread indexes, null = all
	let sel = null, base = null, drag = null; // ranges [a, b) in microseconds
	const hm = () => $("heatmap");

	function activeThreads() {
		return picked ? picked.map((i) => thr[i]) : thr;
	}

	function buildCells() {
		ncols = Math.max(1, Math.ceil((dur + 1) / 1e6));
		cellW = new Float64Array(ncols * ROWS);
		cellN = new Float64Array(ncols * ROWS);
		for (const t of activeThreads()) {
			for (let i = t.first; i < t.first + t.n; i++) {
				const c = Math.floor(T[i] / 1e6), r = Math.floor((T[i] % 1e6) / (1e6 / ROWS));
				cellW[c * ROWS + r] += W[i];
				cellN[c * ROWS + r] += 1;
			}
		}
	}

	function cellOf(ev) {
		const rect = hm().getBoundingClientRect();
		const x = ev.clientX - rect.left - 40, y = ev.clientY - rect.top - 4;
		const c = Math.min(ncols - 1, Math.max(0, Math.floor(x / cw)));
		const r = Math.min(ROWS - 1, Math.max(0, Math.floor(y / CELL_H)));
		return c * ROWS + r;
	}

	const cellT = (k) => Math.floor(k / ROWS) * 1e6 + (k % ROWS) * (1e6 / ROWS);

	function rangeOf(k0, k1) {
		const a = Math.min(k0, k1), b = Math.max(k0, k1);
		return [cellT(a), cellT(b) + 1e6 / ROWS];
	}

	function drawHeatmap() {
		const cv = hm(), wrap = $("hm-wrap");
		cw = Math.max(2, Math.min(24, Math.floor((wrap.clientWidth - 50) / ncols)));
		cv.width = 40 + ncols * cw + 4;
		cv.height = ROWS * CELL_H + 22;
		const g = cv.getContext("2d");
		g.fillStyle = "#fff";
		g.fillRect(0, 0, cv.width, cv.height);
		const v = $("colour").value === "n" ? cellN : cellW;
		let max = 0;
		for (let i = 0; i < v.length; i++) if (v[i] > max) max = v[i];
		for (let c = 0; c < ncols; c++) {
			for (let r = 0; r < ROWS; r++) {
				const x = v[c * ROWS + r];
				const k = c * ROWS + r, t = cellT(k);
				const inSel = sel && t >= sel[0] && t < sel[1], inBase = base && t >= base[0] && t < base[1];
				if (x > 0) {
					const f = Math.sqrt(x / max);
					g.fillStyle = "rgb(" + Math.round(255 - 55 * f) + "," + Math.round(235 - 200 * f) + "," + Math.round(215 - 200 * f) + ")";
				} else {
					g.fillStyle = "#f4f4f4";
				}
				g.fillRect(40 + c * cw, 4 + r * CELL_H, cw - (cw > 3 ? 1 : 0), CELL_H - 1);
				if (inSel || inBase) {
					g.fillStyle = inSel ? "rgba(40,90,255,0.45)" : "rgba(0,170,90,0.45)";
					g.fillRect(40 + c * cw, 4 + r * CELL_H, cw, CELL_H);
				}
			}
		}
		g.fillStyle = "#333";
		g.font = "10px Verdana";
		for (let r = 0; r < ROWS; r += 10) g.fillText(r * (1000 / ROWS) + "ms", 0, 4 + r * CELL_H + 8);
		const every = Math.max(1, Math.ceil(40 / cw));
		for (let c = 0; c < ncols; c += every) g.fillText(c + "s", 40 + c * cw, ROWS * CELL_H + 18);
	}

	function onHover(ev) {
		const k = cellOf(ev), tip = $("hm-tip");
		const t = cellT(k);
		tip.style.display = "block";
		tip.style.left = ev.offsetX + 12 + "px";
		tip.style.top = ev.offsetY + 12 + "px";
		tip.textContent = (t / 1e6).toFixed(2) + " s: " + fmt(cellW[k]) + " " + meta.unit + ", " + cellN[k] + " countings";
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

	function sum(range) {
		const self = new Float64Array(nnodes);
		for (const t of activeThreads()) {
			let lo = t.first, hi = t.first + t.n;
			while (lo < hi) {
				const m = (lo + hi) >> 1;
				if (T[m] < range[0]) lo = m + 1;
				else hi = m;
			}
			for (let i = lo; i < t.first + t.n && T[i] < range[1]; i++) self[N[i]] += W[i];
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

	function drawFlame() {
		const t0 = performance.now();
		const box = $("flame");
		if (!sel) {
			box.innerHTML = "";
			return;
		}
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
		const out = [];
		let maxDepth = 0, matched = 0;
		const path = [];
		for (let n = zoom; n !== 0; n = parent[n]) path.push(n);
		path.push(0);
		path.reverse(); // root .. zoom
		const zt = tot[zoom] || 0;
		const items = [];
		path.forEach((n, d) => { if (tot[n] > 0) items.push([n, d, 0, width, n !== zoom]); });
		const scale = zt > 0 ? width / zt : 0;
		const stack = zt > 0 ? [[zoom, path.length - 1, 0]] : [];
		while (stack.length) {
			const [n, d, x] = stack.pop();
			if (n !== zoom) items.push([n, d, x, tot[n] * scale, false]);
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
		const unit = meta.unit;
		for (const [n, d, x, w, anc] of items) {
			const name = label(n), y = height - (d + 1) * FRAME_H;
			const pct = selTotal ? (100 * tot[n]) / selTotal : 0;
			let title = name + " (" + fmt(tot[n]) + " " + unit + ", " + pct.toFixed(2) + "%";
			if (btot) {
				const dd = 100 * (tot[n] / (tot[0] || 1) - btot[n] / (btot[0] || 1));
				title += ", " + (dd >= 0 ? "+" : "") + dd.toFixed(2) + " points against the baseline";
			}
			title += ")";
			const hit = searchRe && n !== 0 && searchRe.test(name);
			if (hit) {
				let under = false;
				for (let p = parent[n]; p !== 0; p = parent[p]) if (searchRe.test(label(p))) { under = true; break; }
				if (!under) matched += tot[n];
			}
			const chars = Math.floor((w - 6) / 7);
			const text = chars < 3 ? "" : name.length <= chars ? name : name.slice(0, chars - 2) + "..";
			out.push('<g class="f' + (anc ? " anc" : "") + '" data-node="' + n + '" data-parent="' + (n ? parent[n] : -1) + '" data-value="' + tot[n] + '"><title>' + esc(title) +
				'</title><rect x="' + x.toFixed(1) + '" y="' + y + '" width="' + Math.max(0.1, w).toFixed(1) + '" height="' + (FRAME_H - 1) + '" rx="2" fill="' +
				(hit ? "rgb(230,0,230)" : colour(n)) + '"/>' + (text ? '<text x="' + (x + 3).toFixed(1) + '" y="' + (y + 12) + '">' + esc(text) + "</text>" : "") + "</g>");
		}
		const t2 = performance.now();
		box.innerHTML = '<svg width="' + width + '" height="' + height + '" data-total="' + selTotal + '">' + out.join("") + "</svg>";
		$("matched").textContent = searchRe ? "Matched: " + (selTotal ? ((100 * matched) / (tot[zoom] || 1)).toFixed(1) : "0.0") + "%" : "";
		status();
		api.redrawMs = performance.now() - t0;
		api.redrawParts = { sum: t1 - t0, layout: t2 - t1, dom: performance.now() - t2, frames: items.length };
	}

	function status() {
		const r = (x) => (x / 1e6).toFixed(3);
		let s = sel ? "selection " + r(sel[0]) + "–" + r(sel[1]) + " s: " + fmt(selTotal) + " " + meta.unit : "drag across the heatmap to select a time range";
		if (base) s += " | baseline " + r(base[0]) + "–" + r(base[1]) + " s: " + fmt(btot ? btot[0] : 0) + " " + meta.unit + " (red: more than in the baseline, blue: less)";
		if (meta.untimed) s += " | " + meta.untimed + " countings without a time left out";
		$("status").textContent = s;
	}

	// ---- wiring ---------------------------------------------------------------------------
	function redrawAll() {
		buildCells();
		drawHeatmap();
		drawFlame();
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
		$("colour").addEventListener("change", drawHeatmap);
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
			const g = ev.target.closest("g.f");
			if (!g) return;
			zoom = Number(g.dataset.node);
			drawFlame();
		});
		box.addEventListener("mouseover", (ev) => {
			const g = ev.target.closest("g.f");
			if (g) $("details").textContent = g.querySelector("title").textContent;
		});
		window.addEventListener("resize", () => { drawHeatmap(); drawFlame(); });
	}

	api.select = (a, b, asBase) => { // seconds; for scripts
		if (asBase) base = [a * 1e6, b * 1e6];
		else sel = [a * 1e6, b * 1e6];
		zoom = 0;
		drawHeatmap();
		drawFlame();
	};
	api.cellRect = (sec, row) => { // where a cell is drawn, in client coordinates
		const r = hm().getBoundingClientRect();
		return { x: r.left + 40 + sec * cw + cw / 2, y: r.top + 4 + row * CELL_H + CELL_H / 2 };
	};

	const started = performance.now();
	load().then(() => {
		wire();
		const t = performance.now();
		redrawAll();
		api.loadParts.draw = performance.now() - t;
		status();
		api.loadMs = performance.now() - started;
		api.readyAt = performance.now(); // since the navigation began
		api.seconds = ncols;
		api.duration = dur / 1e6; // seconds from the first counting to the last
		api.ready = true;
	}).catch((e) => {
		$("error").textContent = "cannot read the profile: " + e;
		throw e;
	});
})();
