# timeline.gp: where a pipeline's bubbles are.  The reference schedule of
# one sampled batch (karat query --timeline) as a Gantt chart: one lane per
# resource (GPU, link out, memory device, link back, network), one box per
# task, coloured by micro-batch (the key); `layers` decoder layers from
# layer `first` (0-based; default: three layers from the fourth, past
# DeepSeek-V3.2's three dense-FFN layers, so whole MoE layers with their
# all-to-all show).  Each lane's label gives its busy share of the whole
# step.  With datafile2, a second panel below on the same time axis
# (karat plot timeline: naive above, OFMS+CMR below, the same batch).
# Reads the columns microbatch, layer, resource, start_s, end_s by name.
#   gnuplot -e "datafile='results/timeline-naive.csv'; outfile='t.png'" plots/timeline.gp
# format='svg' or 'pdf' for those terminals (karat plot --format).
if (!exists("datafile")) datafile = "results/timeline-naive.csv"
if (!exists("outfile")) outfile = "results/timeline.png"
if (!exists("format")) format = "png"
if (!exists("layers")) layers = 3
if (!exists("first")) first = 3
if (!exists("title1")) title1 = datafile
if (!exists("title2")) title2 = exists("datafile2") ? datafile2 : ""
panels = exists("datafile2") ? 2 : 1
W = 900; H = 270 * panels + 50
if (format eq "svg") { set terminal svg size W, H dynamic enhanced font ",9" } \
else { if (format eq "pdf") { set terminal pdfcairo size W / 100.0, H / 100.0 enhanced font ",7" } \
else { set terminal pngcairo size W, H enhanced font ",9" } }
set output outfile
set datafile separator ","
set datafile columnheaders
lane(s) = s eq "gpu" ? 5 : s eq "link" ? 4 : s eq "memdev" ? 3 : s eq "link_back" ? 2 : \
          s eq "net" ? 1 : 0
array mbc[16] = [0x3070b0, 0xd03030, 0x30a030, 0xe0a020, 0x8050b0, 0x30a0a0, 0xb07030, \
                 0x606060, 0x5090d0, 0xe07070, 0x70c070, 0xf0c060, 0xa080d0, 0x70d0d0, \
                 0xd0a070, 0xa0a0a0]
# the model's layers (tail tasks carry no layer index below it) and the
# layers shown; fewer layers than asked: from the first
stats datafile using (column("layer")) nooutput
nlayers = int(STATS_max) + 1
if (first + layers > nlayers) first = 0
shown(l) = l >= first && l < first + layers
# one time axis for both panels: the shown layers' span over both files
stats datafile using (shown(column("layer")) ? column("start_s") * 1e6 : 1/0) nooutput
x0 = STATS_min
stats datafile using (shown(column("layer")) ? column("end_s") * 1e6 : 1/0) nooutput
x1 = STATS_max
if (panels == 2) {
  stats datafile2 using (shown(column("layer")) ? column("start_s") * 1e6 : 1/0) nooutput
  x0 = STATS_min < x0 ? STATS_min : x0
  stats datafile2 using (shown(column("layer")) ? column("end_s") * 1e6 : 1/0) nooutput
  x1 = STATS_max > x1 ? STATS_max : x1
}
# each resource's busy share of the whole step (not only the layers
# shown), per panel, before the x range is set (stats honours it)
array share[10]
array span[2]
array nmb[2]
do for [p = 1:panels] {
  f = p == 1 ? datafile : datafile2
  stats f using (column("end_s")) nooutput
  span[p] = STATS_max
  stats f using (column("microbatch")) nooutput
  nmb[p] = int(STATS_max) + 1
  do for [k = 1:5] {
    stats f using (lane(strcol("resource")) == 6 - k ? column("end_s") - column("start_s") : 0) nooutput
    share[5 * (p - 1) + k] = span[p] > 0 ? 100 * STATS_sum / span[p] : 0
  }
}
set xrange [x0:x1]
set xlabel "time in the step (us)"
set grid xtics
set style fill solid 0.85 border lc rgb "#303030"
set key outside right top vertical samplen 1.5 title "micro-batch"
set yrange [0.4:5.6]
set lmargin 17
set rmargin 16
set multiplot layout panels, 1
do for [p = 1:panels] {
  f = p == 1 ? datafile : datafile2
  o = 5 * (p - 1)
  pc(x) = sprintf("%.0f", x)."%%" # a tic label is a format: %% prints %
  set ytics ("GPU ".pc(share[o + 1]) 5, "link out ".pc(share[o + 2]) 4, \
             "memory dev. ".pc(share[o + 3]) 3, "link back ".pc(share[o + 4]) 2, \
             "network ".pc(share[o + 5]) 1)
  set title sprintf("%s\nlayers %d-%d of %d; lanes: busy share of the whole %.1f ms step", \
                    p == 1 ? title1 : title2, first + 1, first + layers, nlayers, span[p] * 1e3) noenhanced
  plot f using (shown(column("layer")) ? (column("start_s") + column("end_s")) / 2 * 1e6 : 1/0): \
       (lane(strcol("resource"))):((column("end_s") - column("start_s")) / 2 * 1e6):(0.36): \
       (mbc[int(column("microbatch")) % 16 + 1]) with boxxyerror lc rgb variable notitle, \
       for [i = 1:nmb[p]] NaN with boxes lc rgb mbc[(i - 1) % 16 + 1] title sprintf("%g", i + 0.0)
}
unset multiplot
