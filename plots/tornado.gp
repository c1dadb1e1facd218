# tornado.gp: the sensitivity of throughput per TDP to each assumed figure
# of the KARAT device, each alone at half (blue) and twice (red) its value,
# one panel per model, bars in per cent of the base point.
# Reads a sweep CSV with a [vary] section (results/sensitivity.csv) by
# column name: model, vary, tok_s_per_w, overrides.  Its rows come model by model,
# the base point first, then each label (karat sweep's order).
#   gnuplot -e "datafile='results/sensitivity.csv'; outfile='t.png'" plots/tornado.gp
# format='svg' or 'pdf' for those terminals (karat plot --format).
if (!exists("datafile")) datafile = "results/sensitivity.csv"
if (!exists("outfile")) outfile = "results/sensitivity.png"
if (!exists("format")) format = "png"
set datafile separator ","
set datafile columnheaders
# models in order; rows per model (the base and its labels)
models = " "; nrow = 0
stats datafile using (m = strcol("model"), nrow = nrow + 1, \
      (strstrt(models, " ".m." ") == 0 ? (models = models.m." ", 0) : 0)) nooutput
nm = words(models)
per = nrow / nm
array base[nm]
do for [i=1:nm] {
  b0 = (i - 1) * per
  stats datafile every ::b0::b0 using (column("tok_s_per_w")) name "B" nooutput
  base[i] = B_max
}
W = 900; H = 80 + 24 * per  # every panel within 900 px
if (format eq "svg") { set terminal svg size W, H dynamic enhanced font ",10" } \
else { if (format eq "pdf") { set terminal pdfcairo size W / 100.0, H / 100.0 enhanced font ",8" } \
else { set terminal pngcairo size W, H enhanced font ",9" } }
set output outfile
set xlabel "throughput per TDP against the base (%)"
set grid xtics
set style fill solid 0.85 border -1
set ytics noenhanced font ",8"
set yrange [per - 0.5 : 0.5] reverse
# a label whose overrides also set the device's TDP (its file derives the
# TDP from the figure) says so: more of the figure then costs watts too
vlabel(r) = strcol("vary").(strstrt(strcol("overrides"), ".tdp=") > 0 && \
            strstrt(strcol("vary"), "tdp") == 0 ? " (+TDP)" : "")
unset key
set multiplot layout 1, nm
do for [i=1:nm] {
  b0 = (i - 1) * per
  B_max = base[i]
  set title word(models, i)." (base ".sprintf("%.3f", B_max)." tok/s/W)" noenhanced
  plot datafile every ::(b0 + 1)::(b0 + per - 1) using \
       (50 * (column("tok_s_per_w") / B_max - 1)):($0 + 1):(abs(50 * (column("tok_s_per_w") / B_max - 1))):(0.38): \
       (strstrt(strcol("vary"), "0.5x") ? 0x3070b0 : 0xd03030):ytic(vlabel(0)) \
       with boxxyerror lc rgb variable
}
unset multiplot
