# headline.gp: a study's systems at their best configuration, throughput
# per TDP, one group of bars per model, algorithm and workload, systems in
# colour, each bar labelled with its ratio to the baseline; a system with
# no feasible configuration is marked "infeasible" in its slot.
# Reads a study CSV of `karat run` (results/headline.csv; columns 2 model,
# 3 algo, 4 workload, 5 system, 6 view, 14 tok_s_per_w, 17 vs_gpu_only).
#   gnuplot -e "datafile='results/headline.csv'; outfile='h.png'" plots/headline.gp
if (!exists("datafile")) datafile = "results/headline.csv"
if (!exists("outfile")) outfile = "results/headline.png"
set datafile separator ","
set datafile columnheaders
# bars: the rows of the view `best`
nb = 0
stats datafile using (strcol(6) eq "best" ? (nb = nb + 1, 0) : 0) nooutput
set terminal pngcairo size (400 + 42 * nb), 560 enhanced font ",10"
set output outfile
set title "Each system at its best configuration under the P99 TBT SLO (karat run)" noenhanced
set ylabel "tokens/s per W (TDP)"
set logscale y
stats datafile using (strcol(6) eq "best" && strcol(14) ne "" ? $14 : 1/0) name "Y" nooutput
ytop = 10 ** ceil(log10(Y_max * 3))
set yrange [0.004:ytop]
set grid ytics
set style fill solid 0.85 border -1
set boxwidth 0.85
set key outside right top noenhanced
unset xtics
systems = "gpu-only gpu-host-offload gpu-attacc gpu-duplex gpu-cxl-pnm gpu-karat gpu-karat-nvlink"
array rgbs[7] = [0x606060, 0xb07030, 0x3070b0, 0x30a0a0, 0xa050a0, 0xd03030, 0xe07070]
idx(s) = sum [i=1:words(systems)] (word(systems, i) eq s ? i : 0)
col(s) = idx(s) > 0 ? rgbs[idx(s)] : 0x000000
# x of a best row: a group's systems side by side, a gap between groups;
# first is 1 on a group's first bar (its label goes there)
xpos(r) = (r == 0 ? (x = -1, pg = "") : 0, g = strcol(2).strcol(3).strcol(4), \
           first = (g eq pg ? 0 : 1), x = x + (first ? 2 : 1), pg = g, x)
group(r) = strcol(2).(strcol(3) eq "native" ? "" : " ".strcol(3))." ".strcol(4)
plot for [i=1:words(systems)] keyentry with boxes lc rgb rgbs[i] title word(systems, i), \
     datafile using (strcol(6) eq "best" ? xpos($0) : 1/0):($14 > 0 ? $14 : 1/0): \
        (col(strcol(5))) with boxes lc rgb variable notitle, \
     datafile using (strcol(6) eq "best" ? xpos($0) : 1/0):($14 > 0 ? $14 * 1.15 : 1/0): \
        (sprintf("%.2fx", $17)) with labels font ",7" notitle, \
     datafile using (strcol(6) eq "best" ? xpos($0) : 1/0):(strcol(14) eq "" ? 0.006 : 1/0): \
        ("infeasible") with labels rotate by 90 left font ",7" notitle, \
     datafile using (strcol(6) eq "best" ? xpos($0) - 0.45 : 1/0):(ytop / 1.6): \
        (first ? group(0) : "") with labels left font ",9" noenhanced notitle
