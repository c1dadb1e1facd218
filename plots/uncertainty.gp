# uncertainty.gp: the headline's uncertainty over the assumed figures, the
# companion of the tornado (tornado.gp moves one figure at a time; this
# draws them all together).  Top: each row's ratio over the baseline, P10
# to P90 as a bar, P50 as a tick, the files' own figures (nominal) as a
# diamond, the paper's range as a grey band and parity as a dashed line.
# Below, one panel per row: the figures that rank most closely with the
# ratio (Spearman), blue where more of the figure raises the ratio, red
# where it lowers it, with dashed lines at what chance gives (rho_noise).
# Reads `karat run`'s CSVs of an uncertainty study by column name:
# datafile (results/uncertainty.csv): model, workload, system, nominal,
# p10, p50, p90, rho_noise, paper_lo, paper_hi; datafile2
# (results/uncertainty-drivers.csv): model, workload, system, figure, rho,
# rank.  Rows come in the same order in both (karat run's).
#   gnuplot -e "datafile='results/uncertainty.csv'; datafile2='results/uncertainty-drivers.csv'; outfile='u.png'" plots/uncertainty.gp
# format='svg' or 'pdf' for those terminals (karat plot --format).
if (!exists("datafile")) datafile = "results/uncertainty.csv"
if (!exists("datafile2")) datafile2 = "results/uncertainty-drivers.csv"
if (!exists("outfile")) outfile = "results/uncertainty.png"
if (!exists("format")) format = "png"
set datafile separator ","
set datafile columnheaders
NDRV = 6  # figures shown per panel
key3(r) = strcol("model")." ".strcol("workload")." ".strcol("system")
# a cell that holds a number (gnuplot reads an empty last field as the
# column's name, so a number is told by its first letter)
isnum(s) = strlen(s) > 0 && strstrt("0123456789.-", s[1:1]) > 0
num(c, dflt) = isnum(strcol(c)) ? real(strcol(c)) : dflt
# the rows: their labels, the chance level of each, the ratio's extent
# (a row whose draws all failed counts by its nominal, or 1), the paper's
# range (0 where the study gives none)
nrow = 0; labels = ""; noises = ""; plo = ""; phi = ""
nom(r) = num("nominal", 1)
stats datafile using (nrow = nrow + 1, labels = labels.key3(0)."|", \
      noises = noises.strcol("rho_noise")."|", plo = strcol("paper_lo"), \
      phi = strcol("paper_hi"), num("p10", nom(0)) < nom(0) ? num("p10", 1) : nom(0)) name "L" nooutput
stats datafile using (num("p90", nom(0)) > nom(0) ? num("p90", 1) : nom(0)) name "U" nooutput
LO = L_min; HI = U_max
PLO_max = isnum(plo) ? real(plo) : 0
PHI_max = isnum(phi) ? real(phi) : 0
# the i-th '|'-separated word (gnuplot has no split)
word_at(s, i) = i <= 1 ? s[1:strstrt(s, "|") - 1] : word_at(s[strstrt(s, "|") + 1:], i - 1)
array noise[nrow]
do for [i=1:nrow] { w = word_at(noises, i); noise[i] = isnum(w) ? real(w) : 0 }
# each row's top figures, '|'-separated, by rank (stats obeys the ranges
# set below, so this comes first)
array labs[nrow]
do for [i=1:nrow] {
  key = word_at(labels, i); lab = ""
  stats datafile2 using (key3(0) eq key && column("rank") <= NDRV && strcol("rho") ne "" ? \
        (lab = lab.strcol("figure")."|", 0) : 0) nooutput
  labs[i] = lab
}
xmax = (PHI_max > HI ? PHI_max : HI) * 1.08
xmin = LO < 1 ? LO * 0.9 : 0
pcols = nrow <= 4 ? 1 : 2
prows = int((nrow + pcols - 1) / pcols)
W = 900; H = 150 + 26 * nrow + prows * (50 + 18 * NDRV)
if (format eq "svg") { set terminal svg size W, H dynamic enhanced font ",10" } \
else { if (format eq "pdf") { set terminal pdfcairo size W / 100.0, H / 100.0 enhanced font ",8" } \
else { set terminal pngcairo size W, H enhanced font ",9" } }
set output outfile
set multiplot
set lmargin 30  # the panels' plots line up
top = (50.0 + 26 * nrow) / H
# the ratios
set origin 0, 1 - top - 40.0 / H
set size 1, top + 40.0 / H
legend = "P10-P90 of the draws (bar), P50 (cross), the files' own figures (diamond); grey: the paper's range"
set title (exists("title1") ? title1."\n" : "").legend noenhanced
set xrange [xmin : xmax]
set yrange [nrow + 0.5 : 0.5]
set ytics noenhanced font ",8"
set ytics ()
do for [i=1:nrow] { set ytics add (word_at(labels, i) i) }
set grid xtics
set xlabel "throughput per watt, over the baseline (x)" offset 0, 0.5
set style fill solid 0.8 border -1
unset key
if (PHI_max > 0) set object 1 rect from PLO_max, graph 0 to PHI_max, graph 1 fc rgb "#dddddd" fs solid 0.6 noborder behind
set arrow 1 from 1, graph 0 to 1, graph 1 nohead dt 2 lc rgb "#555555"
plot datafile using ((column("p10") + column("p90")) / 2):($0 + 1):((column("p90") - column("p10")) / 2):(0.28) \
       with boxxyerror lc rgb "#3070b0", \
     '' using (column("p50")):($0 + 1) with points pt 2 ps 1.6 lw 2 lc rgb "#000000", \
     '' using (column("nominal")):($0 + 1) with points pt 13 ps 1.3 lc rgb "#d03030"
unset object 1
unset arrow 1
unset title
unset xlabel
# the drivers, a panel per row
ph = (1 - top - 40.0 / H) / prows
set xrange [-1 : 1]
set yrange [NDRV + 0.5 : 0.5]
set xtics -1, 0.5, 1
set xlabel "rank correlation with the ratio" offset 0, 0.5
set ytics noenhanced font ",7"
do for [i=1:nrow] {
  set origin ((i - 1) % pcols) * 1.0 / pcols, (prows - 1 - int((i - 1) / pcols)) * ph
  set size 1.0 / pcols, ph
  key = word_at(labels, i)
  set title key noenhanced font ",8"
  unset arrow 2; unset arrow 3
  if (noise[i] > 0) {
    set arrow 2 from -noise[i], graph 0 to -noise[i], graph 1 nohead dt 2 lc rgb "#888888"
    set arrow 3 from noise[i], graph 0 to noise[i], graph 1 nohead dt 2 lc rgb "#888888"
  }
  lab = labs[i]
  set ytics ()
  do for [k=1:NDRV] { if (strstrt(lab, "|") > 0) { set ytics add (word_at(lab, 1) k); lab = lab[strstrt(lab, "|") + 1:] } }
  if (strlen(labs[i]) == 0) {  # no correlation to draw: fewer than three draws served
    set label 9 "no rank correlation: fewer than three draws served" at 0, NDRV / 2.0 center
    unset ytics
    plot 0 notitle lc rgb "#ffffff"
    unset label 9
    set ytics noenhanced font ",7"
    continue
  }
  plot datafile2 using (key3(0) eq key && column("rank") <= NDRV && strcol("rho") ne "" ? \
         column("rho") / 2 : 1/0):(column("rank")):(abs(column("rho")) / 2):(0.38): \
         (column("rho") > 0 ? 0x3070b0 : 0xd03030) \
       with boxxyerror lc rgb variable
}
unset multiplot
