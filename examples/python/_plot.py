"""matplotlib when it is installed; otherwise the examples say so and
write their arrays as .npy only."""
import sys


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
