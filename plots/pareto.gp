# pareto.gp: throughput per TDP against P99 time between tokens, one curve
# per system as its batch grows (each point a batch of the sweep that
# fits), the SLO dashed: a system's front is the part left of the line.
# Reads a sweep CSV by column name: system, batch, tbt_p99_s, tok_s_per_w,
# slo_s, reason (results/tbt-batch.csv: points whose caches do not fit are
# left out).
#   gnuplot -e "datafile='results/tbt-batch.csv'; outfile='p.png'" plots/pareto.gp
# format='svg' or 'pdf' for those terminals (karat plot --format).
if (!exists("datafile")) datafile = "results/tbt-batch.csv"
if (!exists("outfile")) outfile = "results/pareto.png"
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
if (!exists("heading")) heading = exists("title1") ? title1."\n" : ""
set title heading."Throughput per TDP against P99 TBT, batch by batch (the SLO dashed)" noenhanced
set xlabel "P99 TBT (ms)"
set ylabel "tokens/s per W (TDP)"
set logscale xy
set grid
set key top left noenhanced
set arrow from SLO_max, graph 0 to SLO_max, graph 1 nohead dt 2 lw 2 lc rgb "#000000"
fits(r) = strstrt(strcol("reason"), "memory") == 0
sys(s) = strcol("system") eq s
# the points that fit: none says so; one alone still gets a range
stats datafile using (fits(0) ? 1 : 0) name "NF" nooutput
if (NF_sum == 0) {
  set xrange [SLO_max / 2.0 : SLO_max * 2.0]
  set yrange [0.5 : 2]
  set label 1 "no batch of the sweep fits" at graph 0.5, 0.5 center
  plot 5 notitle
} else {
  stats datafile using (fits(0) ? column("tbt_p99_s") * 1e3 : 1/0) name "PX" nooutput
  stats datafile using (fits(0) ? column("tok_s_per_w") : 1/0) name "PY" nooutput
  if (PX_min == PX_max) { set xrange [PX_min / 2.0 : PX_max * 2.0] }
  if (PY_min == PY_max) { set yrange [PY_min / 2.0 : PY_max * 2.0] }
  plot for [i=1:words(systems)] datafile using (sys(word(systems, i)) && fits(0) ? \
          column("tbt_p99_s") * 1e3 : 1/0):(column("tok_s_per_w")) with linespoints lw 2 pt 7 \
          lc i title word(systems, i)
}
