# reconcile.gp: a study with [steps] (results/reconcile.csv): the focus
# system over the baseline after each step, each switch added to those
# before it, one colour per model: best against best (solid) and at the
# same GPU count (dashed), with the paper's range as a grey band.
# Reads a study CSV of `karat run` by column name: model, view, system,
# step, vs_gpu_only, paper_lo, paper_hi; the focus system is the last
# row's.
#   gnuplot -e "datafile='results/reconcile.csv'; outfile='r.png'" plots/reconcile.gp
# format='svg' or 'pdf' for those terminals (karat plot --format).
if (!exists("datafile")) datafile = "results/reconcile.csv"
if (!exists("outfile")) outfile = "results/reconcile.png"
if (!exists("format")) format = "png"
if (format eq "svg") { set terminal svg size 900, 560 dynamic enhanced font ",10" } \
else { if (format eq "pdf") { set terminal pdfcairo size 9, 5.6 enhanced font ",9" } \
else { set terminal pngcairo size 900, 560 enhanced font ",10" } }
set output outfile
set datafile separator ","
set datafile columnheaders
stats datafile using (focus = strcol("system"), 0) nooutput
models = " "
steps = " "
# a study without steps has an empty step: one step, "as is"
step(r) = strcol("step") eq "" ? "as-is" : strcol("step")
stats datafile using (m = strcol("model"), s = step(0), \
      (strstrt(models, " ".m." ") == 0 ? (models = models.m." ", 0) : 0), \
      (strstrt(steps, " ".s." ") == 0 ? (steps = steps.s." ", 0) : 0)) nooutput
nstep = words(steps)
sx(s) = sum [k=1:nstep] (word(steps, k) eq s ? k : 0)
row(m, v) = strcol("view") eq v && strcol("system") eq focus && strcol("model") eq m && \
            strcol("vs_gpu_only") ne ""
if (!exists("heading")) heading = exists("title1") ? title1."\n" : ""
set title heading.focus." over the baseline after each step (paper's range grey)" noenhanced
set ylabel "ratio of throughput per W (log scale)"
set grid ytics
set key outside right top noenhanced
set xrange [0.5 : nstep + 0.5]
set xtics rotate by 30 right noenhanced
set for [k=1:nstep] xtics add (word(steps, k) k)
# the paper's range, where the study gives one
stats datafile using (strcol("paper_lo") ne "" ? 1 : 0) name "HP" nooutput
stats datafile using (strcol("system") eq focus && strcol("vs_gpu_only") ne "" ? 1 : 0) \
      name "HR" nooutput
if (HR_sum > 0) {
  stats datafile using (strcol("system") eq focus && strcol("vs_gpu_only") ne "" ? \
        column("vs_gpu_only") : 1/0) name "R" nooutput
} else { R_min = 1; R_max = 1 }
if (HP_sum > 0) {
  stats datafile using (strcol("paper_lo") ne "" ? column("paper_lo") : 1/0) name "PL" nooutput
  stats datafile using (strcol("paper_hi") ne "" ? column("paper_hi") : 1/0) name "PH" nooutput
  set object 1 rect from graph 0, first PL_min to graph 1, first PH_max fc rgb "#dddddd" \
      fillstyle solid 1.0 noborder behind
} else { PL_min = R_min; PH_max = R_max }
# a log scale: the same-GPUs view can run to tens where GPU-only barely fits
set logscale y
set yrange [(R_min < PL_min ? R_min : PL_min) / 1.3 : (R_max > PH_max ? R_max : PH_max) * 1.3]
# a row of another series repeats the series' last point, so the line is
# not broken by the rows between (as axes.gp)
px(m, v) = ($0 == 0 ? (lx = NaN, ly = NaN) : 0, \
            row(m, v) ? (lx = sx(step(0)), ly = column("vs_gpu_only")) : 0, lx)
nm = words(models)
plot for [i=1:nm] datafile using (px(word(models, i), "best")):(ly) \
        with linespoints lw 2 pt 7 lc i title word(models, i)." best", \
     for [i=1:nm] datafile using (px(word(models, i), "same-gpus")):(ly) \
        with linespoints lw 1 pt 6 dt 2 lc i title word(models, i)." same GPUs"
