# axes.gp: a study's focus system over its baseline, best against best,
# along the P99 TBT SLO (x) and the GPU generation (one line style per
# GPU), one colour per model: how the headline's ratio moves when the SLO
# tightens or both sides move to a newer GPU.  The dashed line is parity.
# Reads a study CSV of `karat run` (results/axes.csv) by column name:
# model, view, system, slo_ms, gpu, vs_gpu_only; the focus system is the
# last row's.  Each line joins its model's points on one GPU, in file
# (SLO) order.
#   gnuplot -e "datafile='results/axes.csv'; outfile='a.png'" plots/axes.gp
# format='svg' or 'pdf' for those terminals (karat plot --format).
if (!exists("datafile")) datafile = "results/axes.csv"
if (!exists("outfile")) outfile = "results/axes.png"
if (!exists("format")) format = "png"
if (format eq "svg") { set terminal svg size 900, 560 dynamic enhanced font ",10" } \
else { if (format eq "pdf") { set terminal pdfcairo size 9, 5.6 enhanced font ",9" } \
else { set terminal pngcairo size 900, 560 enhanced font ",10" } }
set output outfile
set datafile separator ","
set datafile columnheaders
# the focus system (the last row's), the models and the GPUs, in file order
stats datafile using (focus = strcol("system"), 0) nooutput
models = " "
gpus = " "
# a study without gpu_types runs each system on its own GPU (gpu empty)
gpu(r) = strcol("gpu") eq "" ? "own" : strcol("gpu")
stats datafile using (m = strcol("model"), g = gpu(0), \
      (strstrt(models, " ".m." ") == 0 ? (models = models.m." ", 0) : 0), \
      (strstrt(gpus, " ".g." ") == 0 ? (gpus = gpus.g." ", 0) : 0)) nooutput
row(m, g) = strcol("view") eq "best" && strcol("system") eq focus && \
            strcol("model") eq m && gpu(0) eq g && strcol("vs_gpu_only") ne ""
if (!exists("heading")) heading = exists("title1") ? title1."\n" : ""
set title heading.focus." over the baseline, each at its best, along the SLO and the GPU" noenhanced
set xlabel "P99 TBT SLO (ms)"
set ylabel "ratio of throughput per W"
set grid
set key outside right top noenhanced
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lc rgb "#000000"
stats datafile using (strcol("view") eq "best" && strcol("system") eq focus && \
      strcol("vs_gpu_only") ne "" ? column("vs_gpu_only") : 1/0) name "R" nooutput
stats datafile using (column("slo_ms")) name "S" nooutput
set yrange [0 : (R_max > 1 ? R_max : 1) * 1.15]
set xrange [S_min - (S_max > S_min ? 0.1 * (S_max - S_min) : 10) : \
            S_max + (S_max > S_min ? 0.1 * (S_max - S_min) : 10)]
ng = words(gpus)
mi(i) = (i - 1) / ng + 1
gi(i) = (i - 1) % ng + 1
# a row of another series repeats the series' last point (drawn on top of
# itself), so the line is not broken by the rows between; before the
# first, nothing (NaN)
px(i) = ($0 == 0 ? (lx = NaN, ly = NaN) : 0, \
         row(word(models, mi(i)), word(gpus, gi(i))) ? \
         (lx = column("slo_ms"), ly = column("vs_gpu_only")) : 0, lx)
plot for [i=1:words(models)*ng] datafile using (px(i)):(ly) \
     with linespoints lw 2 pt 7 lc mi(i) dt gi(i) title (word(models, mi(i))." on ".word(gpus, gi(i)))
