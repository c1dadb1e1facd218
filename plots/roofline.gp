# roofline.gp: the CPU roofline with the measured validation kernels on it.
# Called by `karat calibrate` with: peak (FLOP/s), bw (B/s), datafile, outfile.
# datafile columns: intensity_flop_per_byte achieved_flops_per_s kernel size
set terminal pngcairo size 900,600 enhanced font ",10"
set output outfile
set logscale xy
set xlabel "operational intensity (FLOP/B)"
set ylabel "achieved FLOP/s"
set title sprintf("CPU roofline: %.0f GFLOP/s FP32 FMA peak, %.1f GB/s triad", peak/1e9, bw/1e9)
set key left top
set grid
set xrange [0.1:1000]
set yrange [1e8:peak*3]
roof(x) = (x*bw < peak) ? x*bw : peak
plot roof(x) with lines lw 2 lc rgb "black" title "roofline", \
     datafile using 1:2:3 with labels noenhanced offset char 0,1 font ",8" notitle, \
     datafile using 1:2 with points pt 7 ps 1.2 lc rgb "red" title "kernels (median)"
