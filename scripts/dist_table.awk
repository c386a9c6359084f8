# The scaling table of the README and docs/performance.md from the output of
# bench_dist (scripts/device.sh dist): one row per precision, solver and
# scaling, the rates on 1, 2 and 4 GPUs, the efficiency (the rate a GPU
# against one GPU's) and the exposed exchange at each count, with the
# device, date and commit the rows came from.
#
#   awk -v date=... -v commit=... -f scripts/dist_table.awk dist.txt
/^# .* rank\(s\), / {
  n = split(substr($0, 3), h, ", ")
  dev = h[1]; mode = h[4]; sub(/ scaling/, "", mode)
  grid = h[5]; sub(/^global /, "", grid)
  prec = h[6]; steps = h[7]
  next
}
/^(wave|heat) +P=[0-9]+ / {
  s = $1; p = substr($2, 3) + 0
  for (i = 3; i <= NF; i++) {
    if ($i == "Gpts/s") rate[prec, s, mode, p] = $(i - 1)
    if ($i == "exchange" && $(i + 1) ~ /%$/) ex[prec, s, mode, p] = $(i + 1)
    if ($i == "fuse") fz[prec, s, mode, p] = $(i + 1)
  }
  if (p == 1) g1[prec, s, mode] = grid
  seen[prec] = 1; nsteps[prec] = steps; devs[p] = dev
}
function cell(k, p,   r, e) {
  if (!((k, p) in rate)) return "not run"
  r = rate[k, p]
  if (p == 1 || !((k, 1) in rate) || rate[k, 1] == 0) return r
  e = 100 * r / p / rate[k, 1]
  return sprintf("%s (%.1f%%)", r, e)
}
function fuses(k,   p, t) {
  t = ""
  for (p = 1; p <= 4; p *= 2)
    if ((k, p) in fz) t = t (t == "" ? "" : "/") fz[k, p]
  return t == "" ? "" : ", fused " t
}
END {
  d = devs[4] != "" ? "4 x " devs[4] : devs[2] != "" ? "2 x " devs[2] : devs[1]
  printf "Scaling, %s, %s, commit %s (`scripts/device.sh dist`, bench_dist); Gpts·steps/s in all, (efficiency a GPU against 1 GPU)\n\n", d, date, commit
  print "| precision, steps | case | 1 GPU | 2 GPUs (eff.) | 4 GPUs (eff.) | exposed exchange at 1 / 2 / 4 |"
  print "|---|---|---:|---:|---:|---|"
  split("fp32 fp64", P, " "); split("wave heat", S, " "); split("weak strong", M, " ")
  for (a = 1; a <= 2; a++) {
    if (!(P[a] in seen)) continue
    for (m = 1; m <= 2; m++)
      for (b = 1; b <= 2; b++) {
        k = P[a] SUBSEP S[b] SUBSEP M[m]
        if (!((k, 1) in rate) && !((k, 2) in rate) && !((k, 4) in rate))
          continue
        x = ""
        for (p = 1; p <= 4; p *= 2)
          x = x (x == "" ? "" : " / ") ((k, p) in ex ? ex[k, p] : "-")
        printf "| %s, %s | %s %s (%s %s%s) | %s | %s | %s | %s |\n",
          P[a], nsteps[P[a]], S[b], M[m], g1[k],
          M[m] == "weak" ? "a GPU" : "in all", fuses(k), cell(k, 1),
          cell(k, 2), cell(k, 4), x
      }
  }
}
