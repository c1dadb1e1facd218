# cdf.gp: the distribution of step times over the sampled batches of one
# design point (karat query --step-times), the P99 SLO dashed; with
# datafile2 a second point beside it (make run: DeepSeek-V3.2 on 8 GPUs,
# GPU-only at its solved batch against GPU + KARAT at its own).
# Reads the columns tbt_s and cdf by name.
#   gnuplot -e "datafile='results/steps-gpu-only.csv'; outfile='c.png'" plots/cdf.gp
# format='svg' or 'pdf' for those terminals (karat plot --format).
if (!exists("datafile")) datafile = "results/steps-gpu-only.csv"
if (!exists("outfile")) outfile = "results/cdf.png"
if (!exists("format")) format = "png"
if (!exists("slo_ms")) slo_ms = 100
if (!exists("title1")) title1 = datafile
if (!exists("title2")) title2 = exists("datafile2") ? datafile2 : ""
if (format eq "svg") { set terminal svg size 900, 520 dynamic enhanced font ",10" } \
else { if (format eq "pdf") { set terminal pdfcairo size 9, 5.2 enhanced font ",9" } \
else { set terminal pngcairo size 900, 520 enhanced font ",10" } }
set output outfile
set datafile separator ","
set datafile columnheaders
# one step time alone (one sample) still gets a range
stats datafile using (column("tbt_s") * 1e3) name "CX" nooutput
xlo = CX_min; xhi = CX_max
if (exists("datafile2")) {
  stats datafile2 using (column("tbt_s") * 1e3) name "CY" nooutput
  xlo = CY_min < xlo ? CY_min : xlo; xhi = CY_max > xhi ? CY_max : xhi
}
if (xlo == xhi) { set xrange [xlo * 0.9 : xhi * 1.1] }
set title "Step time over the sampled batches of each answer (the P99 SLO dashed)" noenhanced
set xlabel "time between tokens (ms)"
set ylabel "share of sampled batches"
set yrange [0:1.02]
set grid
set key below vertical maxcols 1 noenhanced font ",8"
set arrow from slo_ms, graph 0 to slo_ms, graph 1 nohead dt 2 lw 2 lc rgb "#000000"
set arrow from graph 0, first 0.99 to graph 1, first 0.99 nohead dt 3 lc rgb "#808080"
if (exists("datafile2")) {
  plot datafile using (column("tbt_s") * 1e3):(column("cdf")) with steps lw 2 title title1, \
       datafile2 using (column("tbt_s") * 1e3):(column("cdf")) with steps lw 2 title title2
} else {
  plot datafile using (column("tbt_s") * 1e3):(column("cdf")) with steps lw 2 title title1
}
