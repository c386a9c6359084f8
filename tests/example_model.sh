#!/bin/sh
# examples/make_model.py writes its model (coarse, to be quick), and
# examples/seismic_model.ini runs on it, reduced in size, from the .npy
# and (with segyio) from the SEG-Y copy: both give the same final field.
# usage: example_model.sh STRATA SOURCE_DIR
# Skipped (exit 77) with a message when python3 with numpy is missing.
set -u
strata=$1 src=$2
. "$src/tests/python_numpy.sh"
dir=$(mktemp -d "${TMPDIR:-/tmp}/strata_example_model.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
cd "$dir" || exit 1
"$py" "$src/examples/make_model.py" --out model --spacing 40 || exit 1
for f in model2d_vp model2d_rho model3d_vp model3d_rho; do
  [ -s "model/$f.npy" ] || { echo "make_model.py wrote no model/$f.npy"; exit 1; }
done
small="--quiet --set grid.n=70,42,48 --set grid.spacing=25 \
  --set boundary.width=8 --set run.steps=40 --set output.every=0 \
  --set model.spacing=40 --set source.position=900,300,20 \
  --set receivers.start=100,300,20 --set receivers.end=1700,300,20 \
  --set receivers.count=17 --set source.frequency=6"
"$strata" run "$src/examples/seismic_model.ini" --out npy.out $small || exit 1
[ -s npy.out/final.npy ] && [ -s npy.out/traces.sgy ] || { echo "no output"; exit 1; }
if [ -s model/model3d_vp.sgy ]; then
  "$strata" run "$src/examples/seismic_model.ini" --out sgy.out $small \
    --set model.velocity=model/model3d_vp.sgy || exit 1
  cmp npy.out/final.npy sgy.out/final.npy || { echo "the SEG-Y model ran differently"; exit 1; }
  echo "the .npy and SEG-Y models gave the same run"
else
  echo "no segyio: the SEG-Y copy was not tested"
fi
# the 2D section, the same at every y
"$strata" run "$src/examples/seismic_model.ini" --out s2d.out $small \
  --set model.velocity=model/model2d_vp.npy --set model.origin=-1000,0 || exit 1
echo "ok"
