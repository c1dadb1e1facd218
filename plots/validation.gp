# validation.gp: the model's kernel times against the published ones, one
# point per row of results/validation.csv (karat validate) in microseconds,
# coloured by GPU family (device.family), filled where a shipped value is
# fitted on the row's table and open where none is (out of sample), on
# log-log axes with the line of equality and +-20% bands.  Reads the
# columns family, role, predicted, measured and unit by name.
#   gnuplot -e "datafile='results/validation.csv'; outfile='v.png'" plots/validation.gp
# format='svg' or 'pdf' for those terminals (karat plot --format).
if (!exists("datafile")) datafile = "results/validation.csv"
if (!exists("outfile")) outfile = "results/validation.png"
if (!exists("format")) format = "png"
if (format eq "svg") { set terminal svg size 800, 700 dynamic enhanced font ",11" } \
else { if (format eq "pdf") { set terminal pdfcairo size 8, 7 enhanced font ",10" } \
else { set terminal pngcairo size 800, 700 enhanced font ",11" } }
set output outfile
set datafile separator ","
set datafile columnheaders
set title "karat against published kernel timings (karat validate)"
set xlabel "measured time (us)"
set ylabel "karat (us)"
set logscale xy
set grid
set key top left noenhanced
set size square
families = "hopper blackwell cdna3 cdna4 ampere"
colours = "#1f77b4 #2ca02c #d62728 #ff7f0e #7f7f7f"
set xrange [1:3000]
set yrange [1:3000]
us(f, r) = strcol("family") eq f && strcol("role") eq r && strcol("unit") eq "us"
plot x with lines lc rgb "#606060" dt 1 title "model = measured", \
     1.2*x with lines lc rgb "#b0b0b0" dt 2 title "+-20%", \
     0.8*x with lines lc rgb "#b0b0b0" dt 2 notitle, \
     for [i=1:words(families)] datafile using (us(word(families, i), "fit") ? column("measured") : 1/0): \
        (column("predicted")) with points pt 7 ps 1.2 lc rgb word(colours, i) title word(families, i), \
     for [i=1:words(families)] datafile using (us(word(families, i), "check") ? column("measured") : 1/0): \
        (column("predicted")) with points pt 6 ps 1.4 lw 1.5 lc rgb word(colours, i) notitle, \
     1/0 with points pt 6 ps 1.4 lw 1.5 lc rgb "#404040" title "open: out of sample"
