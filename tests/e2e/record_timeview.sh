#!/bin/bash
# SPDX-License-Identifier: MIT
#
# record_timeview.sh - `fgcollect record -o x.html` at the defaults on a known answer: Phases
# (tests/java/Phases.java) runs phaseA, phaseB, phaseC, phaseD for 3 s each on its thread
# "phases" and prints when each began (System.nanoTime: the samples' clock). The page is opened in
# chromium and driven with the mouse (tests/browser/timeview_browser.py): every 1 s selection
# inside a phase has >= 90% of the thread's samples under the method hot then, the differential
# of two phases shows which grew, no console error; screenshots in
# $FG_BUILD_DIR/Testing/e2e_record_timeview. Then `-o x.speedscope.json`: one sampled profile
# per thread, the phases' methods among its frames, samples and weights alike in number.
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
fg_init record_timeview
fg_require_built
[[ -x /usr/bin/chromium && -x /usr/bin/chromedriver ]] ||
	fg_missing_tool "chromium and chromium-driver"

fg_sock_dir
fg_jvm_start ph Phases 60
fg_wait_log ph 30 'Phases ready'
fg_wait_log ph 10 'Phases phase phaseA at'

page=$FG_TMP/phases.html
"$FGCOLLECT" record --pid "$FG_HOSTPID" --duration 14 --socket "$FG_SOCK_DIR/fgcollect.sock" \
	-o "$page" 2>"$FG_TMP/record.err" || { cat "$FG_TMP/record.err" >&2; fg_fail "record failed"; }
cat "$FG_TMP/record.err" >&2
[[ -s $page ]] || fg_fail "record wrote no $page"
bytes=$(stat -c %s "$page")
fg_log "page: $bytes bytes"
! grep -qiE '<script[^>]+src=|<link[^>]+href=|https?://[a-z]' "$page" ||
	fg_fail "the page refers to something outside itself: $(grep -oiE '<script[^>]+src=[^>]*>|<link[^>]*>|https?://[a-z][^" ]*' "$page" | head -n 3)"

ss=$FG_TMP/phases.speedscope.json
"$FGCOLLECT" record --pid "$FG_HOSTPID" --duration 3 --socket "$FG_SOCK_DIR/fgcollect.sock" \
	-o "$ss" 2>"$FG_TMP/record2.err" || { cat "$FG_TMP/record2.err" >&2; fg_fail "record -o .speedscope.json failed"; }
python3 - "$ss" <<'PY' || fg_fail "the speedscope file is not what speedscope reads"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["$schema"] == "https://www.speedscope.app/file-format-schema.json"
names = [f["name"] for f in d["shared"]["frames"]]
ph = [p for p in d["profiles"] if p["name"].startswith("phases [tid ")]
assert len(ph) == 1, [p["name"] for p in d["profiles"]]
for p in d["profiles"]:
    assert p["type"] == "sampled" and p["unit"] == "microseconds", p["unit"]
    assert len(p["samples"]) == len(p["weights"])
    assert all(0 <= i < len(names) for s in p["samples"] for i in s)
    assert abs(sum(p["weights"]) - p["endValue"]) < 1e-3 * p["endValue"] + 1
hot = sum(1 for s in ph[0]["samples"] if any(names[i].startswith("Phases::phase") for i in s))
print("speedscope: %d profiles, thread phases %d samples, %d under Phases::phase*" % (
    len(d["profiles"]), len(ph[0]["samples"]), hot))
assert hot * 10 >= len(ph[0]["samples"]) * 9
PY

# The truth: each phase from its start to the next one's.
awk '/^Phases phase / { if (name != "") print name, at, $5; name = "Phases::" $3; at = $5 }
	END { if (name != "") print name, at, at + 3000000000 }' "${FG_CT_LOG[ph]}" >"$FG_TMP/truth"
fg_log "phases: $(tr '\n' ' ' <"$FG_TMP/truth")"
shots=$FG_BUILD_DIR/Testing/e2e_record_timeview
python3 "$FG_SOURCE_DIR/tests/browser/timeview_browser.py" "$page" "$FG_TMP/truth" "$shots" \
	>"$FG_TMP/browser.out" 2>&1 || { cat "$FG_TMP/browser.out" >&2; fg_fail "the page failed in chromium"; }
cat "$FG_TMP/browser.out" >&2
windows=$(grep -c '^ok   .* under Phases::phase' "$FG_TMP/browser.out" || true)
((windows >= 3)) || fg_fail "only $windows phases checked in the page (expected 3 or more in 14 s)"

fg_pass "$windows one-second selections each >= 90% under the phase's method; page $bytes bytes"
