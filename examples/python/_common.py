"""What the examples share: their options, the package from the source
tree when it is not installed, and matplotlib when it is installed
(otherwise they say so and write their arrays as .npy only)."""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "python"))


def options(description, out):
    """--backend, --quick and --out (default out), the folder made."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--backend", default="auto", help="cpu, cuda or auto")
    ap.add_argument("--quick", action="store_true", help="a small grid")
    ap.add_argument("--out", default=out, help="the output folder")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    return a


def pyplot():
    """matplotlib.pyplot (drawing to files), or None with a message."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        return plt
    except ImportError:
        print("matplotlib is not installed, so no figures are drawn (the "
              "arrays are written as .npy); on Debian or Ubuntu: sudo "
              "apt-get install python3-matplotlib", file=sys.stderr)
        return None


def save(fig, out, name):
    fig.tight_layout()
    path = os.path.join(out, name)
    fig.savefig(path, dpi=110)
    print("wrote", path)
