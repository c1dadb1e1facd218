# timeline.gp: where a pipeline's bubbles are.  The reference schedule of
# one sampled batch (karat query --timeline) as a Gantt chart: one lane per
# resource (GPU, link out, memory device, link back, network), one box per
# task, coloured by micro-batch; the first `layers` decoder layers (default
# 3).  With datafile2, a second panel below (karat plot timeline: naive
# above, OFMS+CMR below, the same batch).
# Reads the columns microbatch, layer, resource, start_s, end_s by name.
#   gnuplot -e "datafile='results/timeline-naive.csv'; outfile='t.png'" plots/timeline.gp
# format='svg' or 'pdf' for those terminals (karat plot --format).
if (!exists("datafile")) datafile = "results/timeline-naive.csv"
if (!exists("outfile")) outfile = "results/timeline.png"
if (!exists("format")) format = "png"
if (!exists("layers")) layers = 3
if (!exists("title1")) title1 = datafile
if (!exists("title2")) title2 = exists("datafile2") ? datafile2 : ""
panels = exists("datafile2") ? 2 : 1
W = 1100; H = 260 * panels + 60
if (format eq "svg") { set terminal svg size W, H dynamic enhanced font ",10" } \
else { if (format eq "pdf") { set terminal pdfcairo size W / 100.0, H / 100.0 enhanced font ",8" } \
else { set terminal pngcairo size W, H enhanced font ",10" } }
set output outfile
set datafile separator ","
set datafile columnheaders
lane(s) = s eq "gpu" ? 5 : s eq "link" ? 4 : s eq "memdev" ? 3 : s eq "link_back" ? 2 : \
          s eq "net" ? 1 : 0
array mbc[16] = [0x3070b0, 0xd03030, 0x30a030, 0xe0a020, 0x8050b0, 0x30a0a0, 0xb07030, \
                 0x606060, 0x5090d0, 0xe07070, 0x70c070, 0xf0c060, 0xa080d0, 0x70d0d0, \
                 0xd0a070, 0xa0a0a0]
set ytics ("GPU" 5, "link out" 4, "memory device" 3, "link back" 2, "network" 1)
set yrange [0.4:5.6]
set xlabel "time in the step (us)"
set grid xtics
set style fill solid 0.85 border lc rgb "#303030"
unset key
shown(r) = column("layer") < layers
box(f) = f
set multiplot layout panels, 1
set title title1 noenhanced
plot datafile using (shown(0) ? (column("start_s") + column("end_s")) / 2 * 1e6 : 1/0): \
     (lane(strcol("resource"))):((column("end_s") - column("start_s")) / 2 * 1e6):(0.36): \
     (mbc[int(column("microbatch")) % 16 + 1]) with boxxyerror lc rgb variable
if (panels == 2) {
  set title title2 noenhanced
  plot datafile2 using (shown(0) ? (column("start_s") + column("end_s")) / 2 * 1e6 : 1/0): \
       (lane(strcol("resource"))):((column("end_s") - column("start_s")) / 2 * 1e6):(0.36): \
       (mbc[int(column("microbatch")) % 16 + 1]) with boxxyerror lc rgb variable
}
unset multiplot
