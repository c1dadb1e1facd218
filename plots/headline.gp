# headline.gp: a study's systems at their best configuration, throughput
# per TDP, one group of bars per model, algorithm and workload, systems in
# colour, each bar labelled with its ratio to the baseline; a system with
# no feasible configuration is marked "infeasible" in its slot.
# Reads a study CSV of `karat run` (results/headline.csv) by column name:
# model, algo, workload, system, view, tok_s_per_w, vs_gpu_only,
# baseline_tok_s_per_w, paper_lo, paper_hi (the paper's range, drawn as a
# grey bar at the focus system's bar: the baseline's best times it); the
# focus system's bar also carries, written inside, its ratio in the
# same-gpus and iso-tdp views, where the bar is tall enough to hold it.
#   gnuplot -e "datafile='results/headline.csv'; outfile='h.png'" plots/headline.gp
# format='svg' or 'pdf' for those terminals (karat plot --format).
if (!exists("datafile")) datafile = "results/headline.csv"
if (!exists("outfile")) outfile = "results/headline.png"
if (!exists("format")) format = "png"
set datafile separator ","
set datafile columnheaders
best(r) = strcol("view") eq "best"
# bars: the rows of the view `best`; the highest of them sets the y range
# x of a best row: a group's systems side by side, a gap between groups;
# first is 1 on a group's first bar (its label goes there)
key3(r) = strcol("model").strcol("algo").strcol("workload")
# xpos also counts the groups (gi: the row's group, from 1)
xpos(r) = (r == 0 ? (x = -1, pg = "", gi = 0) : 0, g = key3(0), \
           first = (g eq pg ? 0 : 1), gi = gi + first, x = x + (first ? 2 : 1), pg = g, x)
# a group's label: its model and workload, or only its algorithm where the
# study varies that (the title then names the model and workload)
# and, where most of a workload's requests are cut to the model's window,
# how many (ctx_clipped_share; older CSVs without the column: nothing)
clipped(r) = (c = strcol("ctx_clipped_share"), c ne "" && c + 0 > 0.05 ? \
              sprintf("\n(%.0f", 100 * (c + 0))."% cut to window)" : "")
group(r) = (strcol("algo") eq "native" ? strcol("model")."\n".strcol("workload") : strcol("algo")).clipped(r)
tpw(r) = strcol("tok_s_per_w") eq "" ? 1/0 : column("tok_s_per_w")
# best rows with no feasible configuration: gnuplot 5.4 crashes on a
# labels plot with no valid point, so that clause runs only when it has one
stats datafile using (best(0) && strcol("tok_s_per_w") eq "" ? 1 : 0) name "INF" nooutput
ninf = INF_sum
# the groups, in two rows when there are more than two: the second row's
# bars are shifted to start where the first row's do
stats datafile using (best(0) ? (xpos($0), gi) : 1/0) name "G" nooutput
ngroups = int(G_max)
rows = ngroups > 2 ? 2 : 1
half = rows == 2 ? int((ngroups + 1) / 2) : ngroups
off2 = 0
if (rows == 2) {
  stats datafile using (best(0) ? (xp = xpos($0), gi > half ? xp : 1/0) : 1/0) name "B" nooutput
  off2 = B_min - 1
}
stats datafile using (best(0) ? (xp = xpos($0), gi <= half ? xp : xp - off2) : 1/0) name "X" nooutput
inrow(p) = p == 1 ? gi <= half : gi > half
xat(p) = (xp = xpos($0), inrow(p) ? xp - (p == 2 ? off2 : 0) : 1/0)
stats datafile using (best(0) && strcol("tok_s_per_w") ne "" ? column("tok_s_per_w") : 1/0) \
      name "Y" nooutput
ytop = 10 ** ceil(log10(Y_max * 3))
systems = "gpu-only gpu-host-offload gpu-host-gather gpu-attacc gpu-duplex gpu-duplex-hbm gpu-cxl-pnm gpu-karat gpu-karat-nvlink"
array rgbs[9] = [0x606060, 0xb07030, 0xe0b070, 0x3070b0, 0x30a0a0, 0x90c8c0, 0xa050a0, 0xd03030, 0xe07070]
idx(s) = sum [i=1:words(systems)] (word(systems, i) eq s ? i : 0)
col(s) = idx(s) > 0 ? rgbs[idx(s)] : 0x000000
# the key lists the systems the CSV holds (others are black, unlisted)
array present[words(systems)]
do for [i=1:words(systems)] {
    stats datafile using (strcol("system") eq word(systems, i) ? 1 : 0) name "P" nooutput
    present[i] = P_sum
}
# the paper's range (paper_lo, paper_hi) over the baseline's best, drawn
# at the focus system's bar (the last system of the CSV), where given
stats datafile using (focus = strcol("system"), 0) nooutput
has_paper(r) = best(r) && strcol("system") eq focus && strcol("paper_lo") ne "" && \
               strcol("baseline_tok_s_per_w") ne ""
stats datafile using (has_paper(0) ? 1 : 0) name "NP" nooutput
npaper = NP_sum
paper_y(r, c) = column("baseline_tok_s_per_w") * column(c)
paper(r) = has_paper(r) ? paper_y(r, "paper_lo") : 1/0
# the focus system's other two views, written inside its bar: the ratio
# with the baseline at the system's GPU count and at its TDP
isfocus(v) = strcol("system") eq focus && strcol("view") eq v
stats datafile using (isfocus("iso-tdp") && strcol("vs_gpu_only") ne "" ? 1 : 0) name "NV" nooutput
nviews = NV_sum
vtxt(s) = s eq "" ? "-" : sprintf("%.2fx", real(s))
sg = ""; xf = NaN; yf = NaN
# a bar tall enough to hold the text (about 60% of the panel's height)
tall(y) = log(y / 1.25 / 0.004) > 0.6 * log(ytop / 0.004)
if (!exists("title1")) title1 = "karat run: each system at its best under the P99 TBT SLO; labels: per TDP over the baseline; grey: the paper's range"
title = title1
W = 900; H = 70 + 290 * rows
if (format eq "svg") { set terminal svg size W, H dynamic enhanced font ",9" } \
else { if (format eq "pdf") { set terminal pdfcairo size W / 100.0, H / 100.0 enhanced font ",7" } \
else { set terminal pngcairo size W, H enhanced font ",9" } }
set output outfile
set xrange [0:X_max + 1]
set ylabel "tokens/s per W (TDP)"
set logscale y
set yrange [0.004:ytop]
set grid ytics
set style fill solid 0.85 border -1
set boxwidth 0.85
set key outside right top noenhanced font ",8"
set rmargin at screen 0.80
set lmargin at screen 0.09
unset xtics
set multiplot layout rows, 1 title title noenhanced
do for [p = 1:rows] {
  plot for [i=1:words(systems)] keyentry with boxes lc rgb rgbs[i] \
          title (p == 1 && present[i] > 0 ? word(systems, i) : ""), \
       datafile using (best(0) ? xat(p) : 1/0):(tpw(0)):(col(strcol("system"))) \
          with boxes lc rgb variable notitle, \
       datafile using (best(0) ? xat(p) : 1/0):(tpw(0) * 1.15): \
          (strcol("vs_gpu_only") eq "" ? "-" : sprintf("%.2fx", column("vs_gpu_only"))) \
          with labels font ",6" notitle, \
       for [k=1:(ninf > 0 ? 1 : 0)] datafile using (best(0) ? xat(p) : 1/0):(strcol("tok_s_per_w") eq "" ? 0.006 : 1/0): \
          ("infeasible") with labels rotate by 90 left font ",6" notitle, \
       datafile using (best(0) ? xat(p) - 0.45 : 1/0):(ytop / 1.6): \
          (first ? group(0) : "") with labels left font ",8" noenhanced notitle, \
       for [k=1:(nviews > 0 ? 1 : 0)] datafile using (best(0) ? (xf = xat(p), yf = tpw(0), 1/0) : \
          isfocus("same-gpus") ? (sg = strcol("vs_gpu_only"), 1/0) : isfocus("iso-tdp") && tall(yf) ? xf : 1/0): \
          (yf / 1.25):("same GPUs ".vtxt(sg).", same TDP ".vtxt(strcol("vs_gpu_only"))) \
          with labels rotate by 90 right font ",6" tc rgb "#ffffff" notitle, \
       for [k=1:(npaper > 0 ? 1 : 0)] datafile using (best(0) ? xat(p) + 0.6 : 1/0):(paper(0)): \
          (0):(has_paper(0) ? paper_y(0, "paper_hi") - paper_y(0, "paper_lo") : 1/0) \
          with vectors nohead lw 5 dt 1 lc rgb "#808080" title (p == 1 ? "paper's range" : "")
}
unset multiplot
