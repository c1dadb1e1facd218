# tbt-batch.gp: P99 time between tokens against the batch, one line per
# system, the SLO as a line; a batch whose caches do not fit (the capacity
# wall: reason "... memory ...") is drawn as a cross, one that fits as a dot.
# Reads a sweep CSV by column name: system, batch, tbt_p99_s, slo_s, reason.
#   gnuplot -e "datafile='results/tbt-batch.csv'; outfile='t.png'" plots/tbt-batch.gp
# format='svg' or 'pdf' for those terminals (karat plot --format).
if (!exists("datafile")) datafile = "results/tbt-batch.csv"
if (!exists("outfile")) outfile = "results/tbt-batch.png"
if (!exists("format")) format = "png"
if (format eq "svg") { set terminal svg size 900, 560 dynamic enhanced font ",10" } \
else { if (format eq "pdf") { set terminal pdfcairo size 9, 5.6 enhanced font ",9" } \
else { set terminal pngcairo size 900, 560 enhanced font ",10" } }
set output outfile
set datafile separator ","
set datafile columnheaders
systems = " "
stats datafile using (s = strcol("system"), \
      (strstrt(systems, " ".s." ") == 0 ? (systems = systems.s." ", 0) : 0)) nooutput
stats datafile using (column("slo_s") * 1e3) name "SLO" nooutput
# one batch, or one step time and the SLO alike, still get a range
stats datafile using (column("batch")) name "BX" nooutput
stats datafile using (column("tbt_p99_s") * 1e3) name "BY" nooutput
if (BX_min == BX_max) { set xrange [BX_min / 2.0 : BX_max * 2.0] }
ylo = BY_min < SLO_max ? BY_min : SLO_max
yhi = BY_max > SLO_max ? BY_max : SLO_max
if (ylo == yhi) { set yrange [ylo / 2.0 : yhi * 2.0] }
if (!exists("heading")) heading = exists("title1") ? title1."\n" : ""
set title heading."P99 time between tokens against the batch (the SLO dashed; x: the caches do not fit)" noenhanced
set xlabel "batch (requests, all GPUs)"
set ylabel "P99 TBT (ms)"
set logscale xy 2
set grid
set key top left noenhanced
wall(r) = strstrt(strcol("reason"), "memory") > 0
sys(s) = strcol("system") eq s
plot SLO_max with lines dt 2 lw 2 lc rgb "#000000" title sprintf("SLO %.0f ms", SLO_max), \
     for [i=1:words(systems)] datafile using (sys(word(systems, i)) ? column("batch") : 1/0): \
        (column("tbt_p99_s") * 1e3) with lines lw 2 lc i title word(systems, i), \
     for [i=1:words(systems)] datafile using (sys(word(systems, i)) && !wall(0) ? \
        column("batch") : 1/0):(column("tbt_p99_s") * 1e3) with points pt 7 ps 1 lc i notitle, \
     for [i=1:words(systems)] datafile using (sys(word(systems, i)) && wall(0) ? \
        column("batch") : 1/0):(column("tbt_p99_s") * 1e3) with points pt 2 ps 1.5 lw 2 lc i notitle
