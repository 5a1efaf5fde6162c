#!/bin/bash
# render.sh: the report as a reader sees it, for a small experiment made
# here and for the committed example. report.html in headless Chromium:
# the summary matrix, the overview chart, and per workload and metric a
# plot of every run per arm and of the run order are there, and no label
# is cut (every SVG text's box inside its SVG's viewBox, no table cell
# wider than its column, no table wider than the page). report.xlsx
# through LibreOffice to PDF and PNG: every expected label whole in the
# PDF's text, the Summary one page wide with its ratio chart.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/../lib.sh"
: "${PREREG:?set PREREG to the built binary}" "${SRC:?}"

for tool in soffice chromium pdftotext pdftoppm python3; do
  if ! command -v "$tool" >/dev/null; then
    bad "$tool is missing: run scripts/deps.sh test"
    done_testing
  fi
done

W=$(mktemp -d)
on_exit 'chmod -R u+w "$W" 2>/dev/null; rm -rf "$W"'
cd "$W" || exit 1
mkdir protocols
cat >protocols/look.lua <<'EOF'
protocol {
  id = "look", title = "How a report looks: three arms, three workloads",
  question = "Does every label of the report fit?", author = "T. Ester",
  arms = {
    { name = "bare", reference = true },
    { name = "bwrap" },
    { name = "a-rather-long-arm-name" },
  },
  workloads = {
    { name = "startup", metrics = { "wall_s" } },
    { name = "idle-memory-of-the-sandbox", metrics = { "pss_mib" } },
    { name = "build", metrics = { "wall_s", "inner_s" } },
  },
  rule = {
    estimator = "median", confidence = 0.95, resamples = 2000, seed = 17,
    verdicts = {
      { "slower", ci_excludes = 1, ratio_above = 1.10,
        names = { memory = "more memory" } },
      { "faster", ci_excludes = 1, ratio_below = 1 / 1.10,
        names = { memory = "less memory" } },
      { "tie", ci_within = { 0.95, 1.05 } },
    },
  },
  hypotheses = {
    { id = "H1", says = "bwrap takes at least 2x as long to start",
      workload = "startup", metric = "wall_s", arms = { "bwrap" },
      claim = at_least(2) },
  },
}
EOF
# Two batches; the long-named arm's build moves from the first to the
# second (a drift between batches), one bwrap start-up is an outlier.
gen() { # gen BATCH > file
  python3 - "$1" <<'PY'
import math, sys
b = int(sys.argv[1])
print("workload,arm,metric,value,run,started_at")
arms = (("bare", 1.0), ("bwrap", 2.3), ("a-rather-long-arm-name", 11.0))
for i in range(20):
    t = "2026-10-2%dT08:%02d:%02dZ" % (b, i // 2, 10 * (i % 2))
    for k, (a, m) in enumerate(arms):
        j = 1 + 0.04 * math.sin(i * 1.7 + k)
        v = 0.0034 * m * j * (1.8 if (a == "bwrap" and i == 7 and b == 1) else 1)
        print("startup,%s,wall_s,%.7f,s%d-%d,%s" % (a, v, b, i, t))
        if i < 10:
            mem = {"bare": 2.18, "bwrap": 2.98}.get(a, 11.2) * (1 + 0.002 * j)
            print("idle-memory-of-the-sandbox,%s,pss_mib,%.5f,m%d-%d,%s"
                  % (a, mem, b, i, t))
            shift = 1.25 if (a == "a-rather-long-arm-name" and b == 2) else 1
            w = 3.3 * (1 + 0.03 * math.cos(i + k)) * shift
            print("build,%s,wall_s,%.5f,c%d-%d,%s" % (a, w, b, i, t))
            print("build,%s,inner_s,%.5f,c%d-%d,%s" % (a, w * 0.99, b, i, t))
PY
}
S=protocols/look.lua
gen 1 >b1.csv
gen 2 >b2.csv
check "register" "$PREREG" register $S --data d
check "import batch 1" "$PREREG" import $S b1.csv --data d
check "import batch 2" "$PREREG" import $S b2.csv --data d
check "report" "$PREREG" report $S --data d --out out
"$PREREG" analyze $S --data d --json >analysis.json
check "analyze --json" test -s analysis.json
R=$W/out

# The HTML in Chromium
chrome() {
  chromium --headless --no-sandbox --disable-gpu --disable-quic \
    --no-first-run --disable-background-networking \
    --disable-component-update --disable-sync \
    --user-data-dir="$(mktemp -d -p "$W")" "$@" 2>>chrome.log
}
# The page as it is, with our own script added to a copy (the report
# itself has none): it measures what the reader sees.
cat >measure.js <<'EOF'
(function () {
  var out = {svgs: [], tables: [], cut: [], page: document.documentElement.clientWidth};
  document.querySelectorAll("svg").forEach(function (svg) {
    var vb = svg.viewBox.baseVal, texts = [], boxes = [];
    svg.querySelectorAll("text").forEach(function (t) {
      // getBBox is in the text's own frame: moved by the shifts of the
      // groups around it (a plot's body under its notices) to the plot's.
      var bb = t.getBBox(), b = {x: bb.x, y: bb.y, width: bb.width,
                                 height: bb.height};
      for (var p = t.parentNode; p && p !== svg; p = p.parentNode) {
        var m = p.transform && p.transform.baseVal.consolidate();
        if (m) {
          b.x += m.matrix.e;
          b.y += m.matrix.f;
        }
      }
      texts.push(t.textContent);
      boxes.push({t: t.textContent, x: b.x, y: b.y, w: b.width, h: b.height});
      if (b.width <= 0 || b.x < -0.5 || b.y < -0.5 ||
          b.x + b.width > vb.width + 0.5 || b.y + b.height > vb.height + 0.5)
        out.cut.push({svg: svg.querySelector("title").textContent,
                      text: t.textContent, x: b.x, y: b.y, w: b.width,
                      h: b.height, vw: vb.width, vh: vb.height});
    });
    out.svgs.push({title: svg.querySelector("title").textContent,
                   texts: texts, boxes: boxes, shapes: svg.querySelectorAll(
                     "circle,rect,path,line").length});
  });
  document.querySelectorAll("table").forEach(function (tb) {
    var head = [], wide = tb.getBoundingClientRect().right;
    tb.querySelectorAll("th").forEach(function (th) { head.push(th.textContent); });
    tb.querySelectorAll("th,td").forEach(function (c) {
      if (c.scrollWidth > c.clientWidth + 1)
        out.cut.push({table: head.join("|"), cell: c.textContent,
                      scroll: c.scrollWidth, client: c.clientWidth});
    });
    out.tables.push({head: head, rows: tb.querySelectorAll("tr").length,
                     right: wide});
  });
  var pre = document.createElement("pre");
  pre.id = "measured";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
EOF
sed 's#</body>#<script src="measure.js"></script></body>#' $R/report.html >$R/check.html
cp measure.js $R/
cat >judge_dom.py <<'PY'
# judge_dom.py DOM ARMS PLOTS: what Chromium measured, judged. ARMS: the
# arms across the matrix, "|"-joined, reference first; PLOTS: every
# workload · metric, "|"-joined.
import html, json, re, sys
dom = open(sys.argv[1], encoding="utf-8").read()
arms, plots = sys.argv[2].split("|"), sys.argv[3].split("|")
m = json.loads(html.unescape(re.search(r'<pre id="measured">(.*?)</pre>', dom, re.S).group(1)))
def say(ok, what):
    print(("ok    " if ok else "FAIL  ") + what)
tables = m["tables"]
matrix = [t for t in tables if t["head"][:2] == ["Workload · metric", "n"]]
say(len(matrix) == 1 and matrix[0]["head"][2:] ==
    [arms[0] + " (reference)"] + arms[1:] and
    matrix[0]["rows"] == 1 + len(plots),
    "the summary matrix: arms across, a row per workload and metric")
say(all(t["right"] <= m["page"] for t in tables),
    "no table is wider than the page (%s)" % [t["right"] for t in tables])
svgs = {s["title"]: s for s in m["svgs"]}
over = [s for s in m["svgs"] if s["title"].startswith("Every ratio to " + arms[0])]
say(len(over) == 1, "the overview chart")
if over:
    t = over[0]["texts"]
    say("1×" in t and ("3×" in t or "1.1×" in t), "its log axis (%s)" % t[:12])
    say("tie" in t and "slower above 1.1" in t, "the rule's thresholds drawn")
    say(sum(x in plots for x in t) == len(plots),
        "grouped by workload and metric")
    say(sum("more memory" in x for x in t) == len(arms) - 1,
        "memory reads more memory")
    # No two boxes of text intersect (the rule's labels above all: close
    # thresholds once printed "slowetie above 1.1").
    bx = over[0]["boxes"]
    hit = [(p["t"], q["t"]) for i, p in enumerate(bx) for q in bx[i + 1:]
           if p["x"] < q["x"] + q["w"] - 0.5 and q["x"] < p["x"] + p["w"] - 0.5
           and p["y"] < q["y"] + q["h"] - 0.5 and q["y"] < p["y"] + p["h"] - 0.5]
    say(len(bx) > 10 and not hit,
        "no two labels of the overview overlap (%d boxes): %s" % (len(bx), hit[:4]))
for w in plots:
    s = svgs.get(w)
    say(s is not None and "every valid run per arm" in s["texts"] and
        "runs in collection order" in s["texts"] and s["shapes"] > 30,
        "a distribution and a run-order plot for %s" % w)
say(not m["cut"], "no label or cell cut: %s" % m["cut"][:5])
PY
# judge OUTFILE CMD...: each "ok"/"FAIL" line CMD prints, counted.
judge() {
  local out=$1
  shift
  "$@" >"$out" 2>&1
  cat "$out"
  while IFS= read -r line; do
    case $line in
      "ok    "*) ok ;;
      "FAIL  "*) bad "${line#FAIL  }" ;;
      *) bad "$out: $line" ;;
    esac
  done <"$out"
}
chrome --window-size=1280,900 --dump-dom "file://$R/check.html" >dom.html
check "Chromium measured the page" grep -q 'id="measured"' dom.html
judge dom.out python3 judge_dom.py dom.html "bare|bwrap|a-rather-long-arm-name" \
  "startup · wall_s|idle-memory-of-the-sandbox · pss_mib|build · wall_s|build · inner_s"
check "the batch boundary named" grep -q '>b0002</text>' $R/plot-3-build-wall_s.svg
# The committed example, as it is in the checkout.
mkdir ex
cp "$SRC"/studies/sandbox-cost/data/sandbox-cost/report/* ex/
sed 's#</body>#<script src="measure.js"></script></body>#' ex/report.html >ex/check.html
cp measure.js ex/
chrome --window-size=1280,900 --dump-dom "file://$W/ex/check.html" >exdom.html
judge exdom.out python3 judge_dom.py exdom.html "bare|bwrap|runc|gvisor" \
  "startup · wall_s|idle-memory · pss_mib|replay · wall_s|compile · wall_s|compile · inner_s|files · wall_s|files · inner_s"
chrome --window-size=1280,2400 --screenshot="$W/page.png" "file://$R/report.html" >/dev/null
check "a screenshot of the page" test -s page.png

# The workbook through LibreOffice
cat >judge_pdf.py <<'PY'
# judge_pdf.py TEXT JSON NAMES: the workbook as LibreOffice printed it
# (pdftotext -layout), against analyze --json; NAMES ("|"-joined) must
# be whole on the Summary's page.
import json, re, sys
pages = open(sys.argv[1], encoding="utf-8").read().split("\f")
j = json.load(open(sys.argv[2]))
names = sys.argv[3].split("|")
def say(ok, what):
    print(("ok    " if ok else "FAIL  ") + what)
first = pages[0]
# The Summary: its header whole on one line of the first page (one page
# wide: nothing of it went to a page of its own).
head = ["Workload", "Metric", "Arm", "n", "Median", "Unit", "IQR", "Min",
        "Max", "Ratio", "CI low", "CI high", "Verdict"]
line = next((l for l in first.split("\n") if "Workload" in l and "Verdict" in l), "")
say(line and all(re.search(r"(^|\s)%s(\s|$)" % re.escape(h), line) for h in head),
    "the Summary's header whole on one line of one page: %r" % line)
# Every verdict and name whole, as many times as the Summary has them.
words = {}
for r in j["results"]:
    words[r["verdict"]] = words.get(r["verdict"], 0) + 1
for w, n in words.items():
    got = len(re.findall(r"(?<![\w-])%s(?![\w-])" % re.escape(w), first))
    say(got >= n, "verdict %r whole %d times on the Summary (%d)" % (w, n, got))
for name in names:
    say(name in first, "%r whole on the Summary" % name)
say(not re.search(r"inconclu(?!sive)|Median \(r|more memo(?!ry)", "".join(pages)),
    "no cut word anywhere")
say("Ratio to the reference, with its interval" in first,
    "the ratio chart on the Summary's page")
say(re.search(r"· \S+ · \S+: [0-9.]+× ", first) is not None,
    "its bars labelled with their comparison")
for word in ["Says", "Amendment", "Batch fact", "SHA-256"]:
    say(word in "".join(pages), "a page with %r" % word)
PY
HOME=$W/lohome timeout 300 soffice --headless --convert-to pdf --outdir pdf \
  $R/report.xlsx >lo.log 2>&1
check "LibreOffice printed the workbook" test -s pdf/report.pdf
pdftotext -layout pdf/report.pdf book.txt
pdftoppm -r 50 -png pdf/report.pdf pdf/page
check "its pages as PNG" test -s "$(ls pdf/page-*.png | head -n 1)"
judge pdf.out python3 judge_pdf.py book.txt analysis.json \
  "a-rather-long-arm-name|idle-memory-of-the-sandbox|reference|H1 held"
# The committed example's workbook.
"$PREREG" analyze "$SRC/studies/sandbox-cost/protocols/sandbox-cost.lua" \
  --data "$SRC/studies/sandbox-cost/data" --json >exa.json
HOME=$W/lohome timeout 300 soffice --headless --convert-to pdf --outdir expdf \
  ex/report.xlsx >>lo.log 2>&1
check "LibreOffice printed the example's workbook" test -s expdf/report.pdf
pdftotext -layout expdf/report.pdf exbook.txt
pdftoppm -r 50 -png expdf/report.pdf expdf/page
check "its pages as PNG" test -s "$(ls expdf/page-*.png | head -n 1)"
# Its hypotheses' outcomes as the committed analysis has them ("H2 held").
exhyp=$(python3 -c '
import json, sys
print("|".join("%s %s" % (h["id"], h["verdict"])
               for h in json.load(open(sys.argv[1]))["hypotheses"]))' exa.json)
judge expdf.out python3 judge_pdf.py exbook.txt exa.json \
  "idle-memory|bwrap|runc|gvisor|reference|$exhyp"
# The workbook's own parts: Raw and Manifest hidden (so not printed),
# every comparison drawn in the chart (each part of its bar wide enough to
# see), the Hypotheses rows top-aligned in every cell.
cat >judge_book.py <<'PY'
# judge_book.py XLSX JSON PDFTEXT: the parts of the workbook, judged.
import json, math, re, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
j = json.load(open(sys.argv[2]))
pages = open(sys.argv[3], encoding="utf-8").read().split("\f")
def say(ok, what):
    print(("ok    " if ok else "FAIL  ") + what)
wb = z.read("xl/workbook.xml").decode()
sheets = re.findall(r'<sheet name="([^"]+)" sheetId="(\d+)"( state="hidden")?', wb)
hidden = [n for n, _, h in sheets if h]
say(set(hidden) == {"Chart data", "Raw", "Manifest"},
    "Raw and Manifest hidden, not printed (%s)" % hidden)
part = {n: "xl/worksheets/sheet%d.xml" % (i + 1) for i, (n, _, _) in enumerate(sheets)}
def cells(name):
    x = z.read(part[name]).decode()
    out = {}
    for ref, attrs, body in re.findall(r'<c r="([A-Z]+\d+)"([^>]*)>(.*?)</c>', x):
        v = re.search(r"<v>(.*?)</v>|<t[^>]*>(.*?)</t>", body)
        st = re.search(r' s="(\d+)"', attrs)
        out[ref] = ((v.group(1) or v.group(2)) if v else None,
                    int(st.group(1)) if st else 0)
    return out
cd = cells("Chart data")
rows = sorted({int(re.sub(r"[A-Z]", "", r)) for r in cd})
drawable = [r for r in j["results"] if r["ci_low"] and r["ci_high"] and
            r["ci_low"] > 0 and r["ci_low"] <= r["ratio"] <= r["ci_high"]]
say(len(rows) == len(drawable),
    "the chart has a bar per comparison (%d of %d)" % (len(rows), len(drawable)))
lo = [float(cd["B%d" % r][0]) for r in rows]
a = [float(cd["C%d" % r][0]) for r in rows]
b = [float(cd["D%d" % r][0]) for r in rows]
span = math.log10(max(l + x + y for l, x, y in zip(lo, a, b)) / min(lo))
say(all(math.log10((l + x) / l) > 0.002 * span and
        math.log10((l + x + y) / (l + x)) > 0.002 * span
        for l, x, y in zip(lo, a, b)),
    "each bar's two parts wide enough to see, narrow intervals too")
st = z.read("xl/styles.xml").decode()
xfs = re.findall(r"<xf [^>]*?(?:/>|>.*?</xf>)",
                 re.search(r"<cellXfs[^>]*>(.*?)</cellXfs>", st, re.S).group(1), re.S)
hy = cells("Hypotheses")
top = lambda ref: 'vertical="top"' in xfs[hy[ref][1]]
hrows = sorted({int(re.sub(r"[A-Z]", "", r)) for r in hy
                if r.startswith("A") and re.match(r"H\w*$", hy[r][0] or "")})
say(hrows and all(top("%s%d" % (c, r)) for r in hrows for c in "ABCD"
                  if "%s%d" % (c, r) in hy),
    "the Hypotheses rows top-aligned in every cell (rows %s)" % hrows)
text = "".join(pages)
listed = re.findall(r"(?:versions|batches)/\S+\s+[0-9a-f]{64}", text)
hashes = len(re.findall(r"\b[0-9a-f]{64}\b", text))
say(not listed and hashes <= 40,
    "no pages of hashes printed (%d digests, %d manifest lines)"
    % (hashes, len(listed)))
PY
judge book.out python3 judge_book.py $R/report.xlsx analysis.json book.txt
judge exbook.out python3 judge_book.py ex/report.xlsx exa.json exbook.txt
expages=$(tr -cd '\f' <exbook.txt | wc -c)
check "the example's workbook prints on at most 14 pages ($expages; 26 with Raw and the manifest)" \
  [ "$expages" -le 14 ]
done_testing 80
