// SPDX-License-Identifier: MIT
// flamegraph.js - the interactive part of every SVG fgcollect draws: zoom, search, details,
// ignore-case, and the URL parameters (x, y, s, i) that restore a view. Embedded at build time
// (cmake/embed.cmake -> flamegraph_js.c); these leading // lines are not embedded.
// It runs inside the SVG's <script>, right after flame_svg.c defines
//   var cfg = { xpad, fontsize, fontwidth, inverted, nametype, countname, searchcolor };
// and expects the element ids and classes that flame_svg.c writes (frames, details, matched,
// search, ignorecase, unzoom; .hide, .parent, .show).
	"use strict";
	var svg, details, matchedtxt, searchbtn, icbtn, unzoombtn, width;
	var frames = [], zoomed = 0, term = null, icase = false;
	function init(evt) {
		svg = document.getElementsByTagName("svg")[0];
		details = document.getElementById("details").firstChild;
		matchedtxt = document.getElementById("matched");
		searchbtn = document.getElementById("search");
		icbtn = document.getElementById("ignorecase");
		unzoombtn = document.getElementById("unzoom");
		width = parseFloat(svg.getAttribute("width"));
		load_frames();
		var p = get_params();
		if (p.i === "1") { icase = true; icbtn.classList.add("show"); }
		if (p.x !== undefined && p.y !== undefined) {
			for (var i = 1; i < frames.length; i++)
				if (frames[i].sx === p.x && frames[i].sy === p.y) { zoom(i); break; }
		}
		if (p.s) search(p.s);
	}
	function re_quote(s) { return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"); }
	function load_frames() {
		var gs = document.getElementById("frames").children, open = [];
		var re = new RegExp("^([\\s\\S]*) \\(([0-9,]+) " + re_quote(cfg.countname) +
			", [\\s\\S]*\\)$");
		for (var i = 0; i < gs.length; i++) {
			var g = gs[i], r = g.querySelector("rect"), t = g.querySelector("text");
			var title = g.querySelector("title").textContent, m = re.exec(title);
			var y = parseFloat(r.getAttribute("y"));
			while (open.length && (cfg.inverted ? open[open.length - 1].y >= y :
			    open[open.length - 1].y <= y))
				open.pop().end = i;
			var f = { g: g, r: r, t: t, y: y, end: gs.length,
				x: parseFloat(r.getAttribute("x")), w: parseFloat(r.getAttribute("width")),
				sx: r.getAttribute("x"), sy: r.getAttribute("y"), sw: r.getAttribute("width"),
				tx: t.getAttribute("x"), text: t.textContent, fill: r.getAttribute("fill"),
				name: m ? m[1] : title, n: m ? parseFloat(m[2].replace(/,/g, "")) : 0,
				parent: -1 };
			if (open.length) f.parent = open[open.length - 1].i;
			f.i = i;
			g.fgi = i;
			frames.push(f);
			open.push(f);
		}
	}
	function get_params() {
		var p = {}, q = window.location.search.substring(1).split("&");
		for (var i = 0; i < q.length; i++) {
			var k = q[i].indexOf("=");
			if (k <= 0) continue;
			try {
				p[decodeURIComponent(q[i].slice(0, k))] =
					decodeURIComponent(q[i].slice(k + 1).replace(/\+/g, " "));
			} catch (e) {}
		}
		return p;
	}
	function set_params(changes) {
		var p = get_params(), s = [];
		for (var k in changes) {
			if (changes[k] === null) delete p[k]; else p[k] = changes[k];
		}
		for (var k in p) s.push(encodeURIComponent(k) + "=" + encodeURIComponent(p[k]));
		var url = window.location.pathname + (s.length ? "?" + s.join("&") : "") +
			window.location.hash;
		try { history.replaceState(null, "", url); } catch (e) {}
	}
	function label(name, w) {
		var chars = Math.floor(w / (cfg.fontsize * cfg.fontwidth));
		if (chars < 3) return "";
		var cps = Array.from(name);
		if (chars >= cps.length) return name;
		return cps.slice(0, chars - 2).join("") + "..";
	}
	function place(f, x, w) {
		f.r.setAttribute("x", x.toFixed(1));
		f.r.setAttribute("width", w.toFixed(1));
		f.t.setAttribute("x", (x + 3).toFixed(2));
		f.t.textContent = label(f.name, w);
	}
	function zoom(i) {
		if (i <= 0) { unzoom(); return; }
		var z = frames[i], ratio = (width - 2 * cfg.xpad) / z.w;
		for (var j = 0; j < frames.length; j++) {
			var f = frames[j], cl = f.g.classList;
			if (j >= i && j < z.end) {
				cl.remove("hide"); cl.remove("parent");
				place(f, cfg.xpad + (f.x - z.x) * ratio, f.w * ratio);
			} else if (j < i && i < f.end) {
				cl.remove("hide"); cl.add("parent");
				place(f, cfg.xpad, width - 2 * cfg.xpad);
			} else {
				cl.add("hide"); cl.remove("parent");
			}
		}
		zoomed = i;
		unzoombtn.classList.remove("hide");
		set_params({ x: z.sx, y: z.sy });
		if (term !== null) search(term);
	}
	function unzoom() {
		for (var j = 0; j < frames.length; j++) {
			var f = frames[j];
			f.g.classList.remove("hide"); f.g.classList.remove("parent");
			f.r.setAttribute("x", f.sx); f.r.setAttribute("width", f.sw);
			f.t.setAttribute("x", f.tx); f.t.textContent = f.text;
		}
		zoomed = 0;
		unzoombtn.classList.add("hide");
		set_params({ x: null, y: null });
		if (term !== null) search(term);
	}
	function search(t) {
		var re;
		try { re = new RegExp(t, icase ? "i" : ""); } catch (e) {
			matchedtxt.textContent = "Invalid regex";
			matchedtxt.classList.remove("hide");
			return;
		}
		term = t;
		var hit = new Uint8Array(frames.length);
		for (var j = 0; j < frames.length; j++) {
			var f = frames[j];
			hit[j] = re.test(f.name) ? 1 : 0;
			f.r.setAttribute("fill", hit[j] ? cfg.searchcolor : f.fill);
		}
		var z = frames[zoomed], sum = 0, a;
		for (a = zoomed; a >= 0 && !hit[a]; a = frames[a].parent);
		if (a >= 0) sum = z.n;
		else for (var j = zoomed + 1; j < z.end;) {
			if (hit[j]) { sum += frames[j].n; j = frames[j].end; } else j++;
		}
		var pct = z.n ? 100 * sum / z.n : 0;
		matchedtxt.textContent = "Matched: " + (pct === 100 ? "100" : pct.toFixed(1)) + "%";
		matchedtxt.classList.remove("hide");
		searchbtn.textContent = "Reset Search";
		searchbtn.classList.add("show");
		set_params({ s: t });
	}
	function reset_search() {
		term = null;
		for (var j = 0; j < frames.length; j++) frames[j].r.setAttribute("fill", frames[j].fill);
		matchedtxt.textContent = " ";
		matchedtxt.classList.add("hide");
		searchbtn.textContent = "Search";
		searchbtn.classList.remove("show");
		set_params({ s: null });
	}
	function search_prompt() {
		var t = prompt("Search frames for a regular expression" +
			(icase ? " (ignoring case)" : "") + "\nCtrl-I toggles case", term === null ? "" : term);
		if (t === null) return;
		if (t === "") reset_search(); else search(t);
	}
	function toggle_icase() {
		icase = !icase;
		icbtn.classList.toggle("show", icase);
		set_params({ i: icase ? "1" : null });
		if (term !== null) search(term);
	}
	function frame_of(n) {
		for (; n && n.parentNode; n = n.parentNode)
			if (n.parentNode.id === "frames") return n;
		return null;
	}
	window.addEventListener("click", function (e) {
		var g = frame_of(e.target);
		if (g) { zoom(g.fgi); return; }
		var id = e.target.id;
		if (id === "unzoom") unzoom();
		else if (id === "search") { if (term !== null) reset_search(); else search_prompt(); }
		else if (id === "ignorecase") toggle_icase();
	}, false);
	window.addEventListener("mouseover", function (e) {
		var g = frame_of(e.target);
		if (g) details.nodeValue = cfg.nametype + " " + g.querySelector("title").textContent;
	}, false);
	window.addEventListener("mouseout", function (e) {
		if (frame_of(e.target)) details.nodeValue = " ";
	}, false);
	window.addEventListener("keydown", function (e) {
		if (e.keyCode === 114 || (e.ctrlKey && e.keyCode === 70)) {
			e.preventDefault();
			search_prompt();
		} else if (e.ctrlKey && e.keyCode === 73) {
			e.preventDefault();
			toggle_icase();
		} else if (e.keyCode === 27 && term !== null) {
			reset_search();
		}
	}, false);
