# ablation.gp: the pipeline schedules against the micro-batch count, one
# panel per model, throughput (tok/s, the whole system) at a fixed batch;
# with datafile2 a second row of panels (make run: 8 GPUs above, 32 GPUs
# below, where expert parallelism spans nodes).
# Reads the columns model, schedule, microbatches, throughput_tok_s by name.
#   gnuplot -e "datafile='results/ablation.csv'; outfile='a.png'" plots/ablation.gp
# format='svg' or 'pdf' for those terminals (karat plot --format).
if (!exists("datafile")) datafile = "results/ablation.csv"
if (!exists("outfile")) outfile = "results/ablation.png"
if (!exists("format")) format = "png"
if (!exists("title1")) title1 = datafile
if (!exists("title2")) title2 = exists("datafile2") ? datafile2 : ""
set datafile separator ","
set datafile columnheaders
# the models and schedules the data holds, in their order
models = " "; schedules = " "
stats datafile using (m = strcol("model"), s = strcol("schedule"), \
      (strstrt(models, " ".m." ") == 0 ? (models = models.m." ", 0) : 0) + \
      (strstrt(schedules, " ".s." ") == 0 ? (schedules = schedules.s." ", 0) : 0)) nooutput
rows = exists("datafile2") ? 2 : 1
W = 900; H = 300 * rows + 40  # every panel within 900 px
if (format eq "svg") { set terminal svg size W, H dynamic enhanced font ",10" } \
else { if (format eq "pdf") { set terminal pdfcairo size W / 100.0, H / 100.0 enhanced font ",8" } \
else { set terminal pngcairo size W, H enhanced font ",9" } }
set output outfile
set logscale x 2
set xrange [0.8:20]
set xtics (1, 2, 4, 8, 16)
set xlabel "micro-batches"
set ylabel "tok/s"
set yrange [0:*]
set grid
set key top right noenhanced font ",8"
pick(m, s) = strcol("model") eq m && strcol("schedule") eq s
set multiplot layout rows, words(models)
do for [r=1:rows] {
  f = r == 1 ? datafile : datafile2
  t = r == 1 ? title1 : title2
  do for [i=1:words(models)] {
    set title word(models, i)."\n".t noenhanced font ",8"
    plot for [j=1:words(schedules)] f using (pick(word(models, i), word(schedules, j)) ? \
         column("microbatches") : 1/0):(column("throughput_tok_s")) with linespoints lw 2 \
         pt 7 title word(schedules, j)
  }
}
unset multiplot
