# validation.gp: the model's kernel times against the published ones, one
# point per row of results/validation.csv, by kernel, on log-log axes with
# the line of equality and +-20% bands.  Run by `karat validate`, or by hand:
#   gnuplot -e "datafile='results/validation.csv'; outfile='v.png'" plots/validation.gp
# Columns read: 3 kernel, 17 predicted, 18 measured, 20 unit (rows in us only).
if (!exists("datafile")) datafile = "results/validation.csv"
if (!exists("outfile")) outfile = "results/validation.png"
set terminal pngcairo size 800,700 enhanced font ",11"
set output outfile
set datafile separator ","
set title "karat against published kernel timings (karat validate)"
set xlabel "measured time (us)"
set ylabel "karat (us)"
set logscale xy
set grid
set key top left noenhanced
set size square
kernels = "gemm grouped_gemm mla_decode sparse_mla_decode indexer topk"
set xrange [1:3000]
set yrange [1:3000]
plot x with lines lc rgb "#606060" dt 1 title "model = measured", \
     1.2*x with lines lc rgb "#b0b0b0" dt 2 title "+-20%", \
     0.8*x with lines lc rgb "#b0b0b0" dt 2 notitle, \
     for [i=1:words(kernels)] datafile every ::1 using \
        (strcol(3) eq word(kernels, i) && strcol(20) eq "us" ? $18 : 1/0):17 with points pt 7 ps 1.2 \
        title word(kernels, i)
