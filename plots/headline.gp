# headline.gp: throughput per TDP of every system, per model, from
# results/headline.csv.  Called by `karat run` with datafile, outfile.
set terminal pngcairo size 1100,600 enhanced font ",10"
set output outfile
set datafile separator ","
set title "Best throughput per TDP under a 100 ms P99 TBT SLO (karat run)"
set ylabel "tokens/s per W (TDP)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set xtics rotate by 90 right noenhanced font ",8"
set bmargin 16
set key off
set grid ytics
set logscale y
plot datafile using ($11 > 0 ? $11 : 1/0):xtic(sprintf("%s %s %s", strcol(2), (strcol(3) eq "native" ? "" : strcol(3)), strcol(4))) every ::1 lc rgb "#3070b0"
