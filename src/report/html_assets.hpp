// The HTML report's style sheet and its one small script, inlined into every page: the page
// loads nothing, and its Content-Security-Policy allows only these inline parts.
#pragma once

namespace preflight::report::html_assets {

// Colours by status and by span category; a dark scheme when the reader's system asks for one.
inline constexpr const char* kStyle = R"css(
:root{--fg:#1f2328;--muted:#59636e;--bg:#fff;--panel:#f6f8fa;--line:#d1d9e0;--hit:#fff8c5;
--pass:#1a7f37;--fail:#cf222e;--error:#9a6700;--warning:#9a6700;--info:#0969da;
--c-stage:#8c959f;--c-failure:#cf222e;--c-data:#0969da;--c-forward:#8250df;--c-backward:#bf3989;
--c-optimizer:#bc4c00;--c-checkpoint:#1a7f37;--c-layer:#54aeff;--c-step:#d4a72c;--c-other:#6e7781;
--c-merged:#afb8c1}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--muted:#9198a1;--bg:#0d1117;--panel:#161b22;
--line:#30363d;--hit:#3b2e00;--pass:#2ea043;--fail:#f85149;--error:#d29922;--warning:#d29922;--info:#4493f8;
--c-merged:#484f58}}
*{box-sizing:border-box}
body{margin:0;color:var(--fg);background:var(--bg);
font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
code,pre,.mono{font-family:ui-monospace,SFMono-Regular,"SF Mono",Menlo,Consolas,"Liberation Mono",monospace;
font-size:13px}
.page-head{padding:20px 24px 14px;background:var(--panel);border-bottom:1px solid var(--line)}
.page-head .title{display:flex;flex-wrap:wrap;align-items:center;gap:8px 16px}
h1{margin:0;font-size:24px;overflow-wrap:anywhere}
h1 .on{font-weight:400;color:var(--muted)}
#verdict{padding:2px 14px;border-radius:999px;color:#fff;background:var(--muted);font-weight:700;
letter-spacing:.06em;text-transform:uppercase}
body[data-verdict=pass] #verdict{background:var(--pass)}
body[data-verdict=fail] #verdict{background:var(--fail)}
body[data-verdict=error] #verdict{background:var(--error)}
.facts{display:flex;flex-wrap:wrap;gap:2px 28px;margin:10px 0 0;font-size:14px}
.facts div{display:flex;gap:6px}.facts dt{color:var(--muted)}.facts dd{margin:0;overflow-wrap:anywhere}
nav.toc{margin-top:10px;font-size:14px}nav.toc a{margin-right:16px;color:var(--info);text-decoration:none}
main{max-width:1480px;margin:0 auto;padding:4px 24px 40px}
h2{font-size:18px;margin:28px 0 12px;padding-bottom:4px;border-bottom:1px solid var(--line)}
.muted,.empty{color:var(--muted)}
.stages{display:flex;gap:3px}
.stage{flex:0 1 0;min-width:6.5em;padding:6px 8px;border-radius:4px;color:#fff;overflow:hidden;
white-space:nowrap;text-overflow:ellipsis;font-size:13px}
.stage .name{display:block;font-weight:600;overflow:hidden;text-overflow:ellipsis}
.stage[data-status=passed]{background:var(--pass)}
.stage[data-status=failed]{background:var(--fail)}
.stage[data-status=not_reached]{color:var(--muted);background:repeating-linear-gradient(135deg,var(--panel) 0 6px,
var(--line) 6px 8px)}
.stage[data-status=absent]{color:var(--muted);border:1px dashed var(--line)}
.key{display:flex;flex-wrap:wrap;gap:4px 16px;padding:0;margin:8px 0 0;list-style:none;font-size:13px;
color:var(--muted)}
.key i{display:inline-block;width:12px;height:12px;border-radius:2px;margin-right:5px;vertical-align:-1px}
.finding{margin:14px 0;padding:12px 16px;border:1px solid var(--line);border-left:5px solid var(--sev);
border-radius:6px}
.finding[data-severity=error]{--sev:var(--fail)}.finding[data-severity=warning]{--sev:var(--warning)}
.finding[data-severity=info]{--sev:var(--info)}
.finding h3{display:inline;margin:0 6px 0 0;font-size:16px}
.badge{display:inline-block;margin-right:6px;padding:0 8px;border:1px solid currentColor;border-radius:999px;
font-size:12px;font-weight:600;vertical-align:2px}
.badge.sev{color:var(--sev)}.where{color:var(--muted);overflow-wrap:anywhere}
.message{margin:8px 0;white-space:pre-wrap;overflow-wrap:anywhere}
.hint{margin:6px 0;white-space:pre-wrap;overflow-wrap:anywhere}.hint b,.meta b{color:var(--muted);font-weight:600}
.meta{margin:6px 0 0;font-size:13px;color:var(--muted)}
pre.code,pre.evidence-code{margin:8px 0;padding:8px 0;overflow-x:auto;background:var(--panel);
border:1px solid var(--line);border-radius:6px;line-height:1.45}
pre .ln{display:inline-block;width:4.5em;padding-right:1em;text-align:right;color:var(--muted);user-select:none}
pre .hit{display:inline-block;min-width:100%;background:var(--hit);box-shadow:inset 3px 0 var(--sev)}
.predicted{margin:8px 0 0;padding:6px 12px;border-left:3px solid var(--line);font-size:14px}
.predicted ul{margin:4px 0;padding-left:18px}
table{border-collapse:collapse;font-size:14px}
th,td{padding:5px 16px 5px 0;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
th{color:var(--muted);font-weight:600;white-space:nowrap}
.basis{font-size:13px;color:var(--muted)}
.bar{display:inline-block;width:200px;height:8px;margin-left:10px;border:1px solid var(--line);border-radius:4px;
background:var(--panel);vertical-align:middle;overflow:hidden}
.bar i{display:block;height:100%;background:var(--pass)}.bar.over i{background:var(--fail)}
.over-text{color:var(--fail);font-weight:600}
.tl-tools{display:flex;align-items:center;gap:6px;margin:0 0 8px;font-size:13px;color:var(--muted)}
.tl-tools[hidden]{display:none}
.tl-tools button{min-width:2.2em;padding:2px 8px;border:1px solid var(--line);border-radius:4px;color:var(--fg);
background:var(--panel);font:inherit;cursor:pointer}
.tl-frame{border:1px solid var(--line);border-radius:6px;overflow:hidden}
#timeline{display:block;width:100%;height:auto;font:11px system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;
touch-action:none;user-select:none}
#timeline .tick{fill:var(--muted);text-anchor:middle}
#timeline .lane-label,#timeline .counter-label{fill:var(--fg)}
#timeline .grid{stroke:var(--line);vector-effect:non-scaling-stroke}
#timeline .lane{fill:transparent}#timeline .lane.odd{fill:var(--panel)}
#timeline rect[data-cat]:hover{opacity:.75}
.s-stage{fill:var(--c-stage);stroke:var(--bg);stroke-width:1.5;vector-effect:non-scaling-stroke}
.st-init,.st-model,.st-validate,.st-evaluate{fill-opacity:.6}.s-failure{fill:var(--c-failure)}.s-data{fill:var(--c-data)}
.s-forward{fill:var(--c-forward)}.s-backward{fill:var(--c-backward)}.s-optimizer{fill:var(--c-optimizer)}
.s-checkpoint{fill:var(--c-checkpoint)}.s-layer{fill:var(--c-layer)}.s-step{fill:var(--c-step)}
.s-other{fill:var(--c-other)}.s-merged{fill:var(--c-merged)}
#timeline .failure-mark{stroke:var(--fail);stroke-width:1.5;stroke-dasharray:4 3;vector-effect:non-scaling-stroke}
#timeline .counter{fill:none;stroke:var(--c-data);stroke-width:1.5;vector-effect:non-scaling-stroke}
#timeline .counter-base{stroke:var(--line);vector-effect:non-scaling-stroke}
.tl-captions p{margin:6px 0;font-size:14px}.callout.failure{color:var(--fail)}
.caption{color:var(--muted)}
footer{max-width:1480px;margin:0 auto;padding:16px 24px 32px;font-size:13px;color:var(--muted)}
@media (max-width:760px){.stages{flex-wrap:wrap}.stage{flex-basis:30%}main,.page-head{padding-left:12px;
padding-right:12px}}
)css";

// Zoom and pan of the trace timeline: changes the plot's viewBox horizontally and redraws the
// scale. The page is whole without it; it reads no data but the numbers on the <svg>.
inline constexpr const char* kScript = R"js(
(function () {
  var svg = document.getElementById('timeline');
  if (!svg) return;
  var plot = document.getElementById('tl-plot'), scale = document.getElementById('tl-scale');
  var grid = document.getElementById('tl-grid'), tools = document.querySelector('.tl-tools');
  var X = +svg.dataset.plotX, W = +svg.dataset.plotWidth, S = +svg.dataset.startUs, E = +svg.dataset.endUs;
  var H = plot.viewBox.baseVal.height, NS = svg.namespaceURI, x0 = 0, w = W, drag = null;
  function label(t, step) {
    return step < 0.001 ? +(t * 1000).toPrecision(6) + ' ms' : +t.toPrecision(6) + ' s';
  }
  function add(parent, name, attributes) {
    var node = document.createElementNS(NS, name);
    for (var key in attributes) node.setAttribute(key, attributes[key]);
    return parent.appendChild(node);
  }
  function ticks() {
    scale.textContent = '';
    grid.textContent = '';
    var a = (S + (E - S) * x0 / W) / 1e6, b = (S + (E - S) * (x0 + w) / W) / 1e6;
    var raw = (b - a) / 10, p = Math.pow(10, Math.floor(Math.log10(raw)));
    var step = [1, 2, 5, 10].map(function (m) { return m * p; }).find(function (s) { return s >= raw; });
    for (var k = Math.ceil(a / step), n = 0; k * step <= b + step * 1e-9 && n <= 40; k++, n++) {
      var px = (k * step * 1e6 - S) / (E - S) * W;
      add(scale, 'text', {'class': 'tick', x: X + (px - x0) / w * W, y: 14}).textContent = label(k * step, step);
      add(grid, 'line', {'class': 'grid', x1: px, x2: px, y1: 22, y2: H});
    }
  }
  function view(nx, nw) {
    w = Math.min(W, Math.max(W / 1e6, nw));
    x0 = Math.min(W - w, Math.max(0, nx));
    plot.setAttribute('viewBox', x0 + ' 0 ' + w + ' ' + H);
    ticks();
  }
  function zoom(factor, center) { view(center - (center - x0) / factor, w / factor); }
  // The plot's place on screen, from the outer <svg>: a nested one's box is its content's.
  function box() {
    var r = svg.getBoundingClientRect(), scale = r.width / svg.viewBox.baseVal.width;
    return {left: r.left + X * scale, width: W * scale};
  }
  function at(clientX) {
    var b = box();
    return x0 + (clientX - b.left) / b.width * w;
  }
  svg.addEventListener('wheel', function (e) {
    e.preventDefault();
    zoom(e.deltaY < 0 ? 1.25 : 0.8, at(e.clientX));
  }, {passive: false});
  svg.addEventListener('pointerdown', function (e) {
    if (e.button !== 0) return;
    drag = {x: e.clientX, x0: x0};
    svg.setPointerCapture(e.pointerId);
  });
  svg.addEventListener('pointermove', function (e) {
    if (drag) view(drag.x0 - (e.clientX - drag.x) / box().width * w, w);
  });
  svg.addEventListener('pointerup', function () { drag = null; });
  tools.hidden = false;
  tools.addEventListener('click', function (e) {
    var z = e.target.getAttribute('data-zoom'), center = x0 + w / 2;
    if (z === 'in') zoom(2, center);
    else if (z === 'out') zoom(0.5, center);
    else if (z === 'left') view(x0 - w / 4, w);
    else if (z === 'right') view(x0 + w / 4, w);
    else if (z === 'reset') view(0, W);
  });
})();
)js";

}  // namespace preflight::report::html_assets
