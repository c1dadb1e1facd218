# ops-roofline.gp: every decode operator of one step on a device's roofline
# (karat ops --roofline): its intensity against the FLOP/s it reaches, the
# device's memory roof and its highest and lowest compute peaks among the
# operators' data types, each point named (names staggered up and down so
# neighbours do not overprint); GPU-side operators blue, cache-side red,
# as the key says.  With datafile2 a second device beside it; side2='cache'
# keeps its cache-side operators alone (a memory device runs only those).
# Reads the columns op, side, intensity_flop_per_byte, achieved_flops_per_s,
# peak_flops_per_s, bandwidth_bytes_per_s by name.
#   gnuplot -e "datafile='results/roofline-h200.csv'; outfile='r.png'" plots/ops-roofline.gp
# format='svg' or 'pdf' for those terminals (karat plot --format).
if (!exists("datafile")) datafile = "results/roofline-h200.csv"
if (!exists("outfile")) outfile = "results/ops-roofline.png"
if (!exists("format")) format = "png"
if (!exists("title1")) title1 = datafile
if (!exists("title2")) title2 = exists("datafile2") ? datafile2 : ""
if (!exists("side2")) side2 = "all"
panels = exists("datafile2") ? 2 : 1
W = panels == 2 ? 900 : 600; H = 520
if (format eq "svg") { set terminal svg size W, H dynamic enhanced font ",10" } \
else { if (format eq "pdf") { set terminal pdfcairo size W / 100.0, H / 100.0 enhanced font ",8" } \
else { set terminal pngcairo size W, H enhanced font ",10" } }
set output outfile
set datafile separator ","
set datafile columnheaders
set logscale xy
set grid
set xlabel "FLOP per byte"
set ylabel "FLOP/s reached"
set key bottom right noenhanced
set xrange [0.05:5000]
col(s) = s eq "cache" ? 0xd03030 : 0x3070b0
set multiplot layout 1, panels
do for [p=1:panels] {
  f = p == 1 ? datafile : datafile2
  keep = p == 1 ? "all" : side2
  shown(r) = keep eq "all" || strcol("side") eq keep
  stats f using (column("peak_flops_per_s")) name "PK" nooutput
  stats f using (column("bandwidth_bytes_per_s")) name "BW" nooutput
  set title (p == 1 ? title1 : title2) noenhanced font ",8"
  set yrange [1e9:PK_max * 3]
  plot (BW_max * x < PK_max ? BW_max * x : PK_max) with lines lw 2 lc rgb "#000000" \
          title sprintf("roof: %.3g TB/s, %.3g TFLOPS", BW_max / 1e12, PK_max / 1e12), \
       (BW_max * x < PK_min ? BW_max * x : PK_min) with lines dt 2 lc rgb "#606060" \
          title sprintf("%.3g TFLOPS", PK_min / 1e12), \
       keyentry with points pt 7 ps 1.2 lc rgb col("gpu") title "GPU-side operator", \
       keyentry with points pt 7 ps 1.2 lc rgb col("cache") title "cache-side operator", \
       f using (shown(0) ? column("intensity_flop_per_byte") : 1/0):(column("achieved_flops_per_s")): \
          (col(strcol("side"))) with points pt 7 ps 1.2 lc rgb variable notitle, \
       for [k=0:2] f using (shown(0) && int($0) % 3 == k ? column("intensity_flop_per_byte") : 1/0): \
          (column("achieved_flops_per_s") * (k == 1 ? 1.6 : k == 2 ? 0.62 : 1)):(strcol("op")) \
          with labels left offset 0.6, 0 font ",6" noenhanced notitle
}
unset multiplot
