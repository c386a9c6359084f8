"""Running a case file (docs/cases.md) from Python: the strata program's
own run, its files read back."""
import json
from typing import Any, Dict, Iterable, Optional, Union
import os
import shutil
import subprocess

import numpy as np

from ._errors import StrataError
from ._lib import LIBRARY_PATH


class CaseError(StrataError):
    """`strata run` refused or failed the case: message is what it printed
    (the case file's line and key, the library's message); returncode its
    exit code."""

    def __init__(self, returncode, message, args):
        self.returncode = returncode
        self.command = args
        Exception.__init__(self, "strata run exited with %d: %s" % (
            returncode, message.strip()))
        self.code, self.status, self.message = 0, "", message.strip()
        self.arg = self.value = self.call = ""


def find_program():
    """The strata program: $STRATA_CLI, the one installed with this
    package, the one beside libstrata.so (a build tree), or `strata` on
    PATH."""
    env = os.environ.get("STRATA_CLI")
    if env:
        return env
    try:
        from . import _build_config
        if os.path.exists(_build_config.CLI):
            return _build_config.CLI
    except ImportError:
        pass
    beside = os.path.join(os.path.dirname(LIBRARY_PATH), "strata")
    if os.path.isfile(beside) and os.access(beside, os.X_OK):
        return beside
    found = shutil.which("strata")
    if found:
        return found
    raise FileNotFoundError("strata: cannot find the strata program; set "
                            "STRATA_CLI to its path")


class CaseResult:
    """The output of a case run: ``dir`` (the output folder), ``summary``
    (summary.json as a dict: the run's metadata and measurements),
    ``files`` (the file names in dir), ``arrays`` (name -> NumPy array of
    every .npy file, read when first asked for: snapshots, the final
    state, "traces"), ``stdout``/``stderr`` of the run."""

    def __init__(self, out_dir, stdout="", stderr=""):
        self.dir = out_dir
        self.stdout, self.stderr = stdout, stderr
        path = os.path.join(out_dir, "summary.json")
        self.summary = {}
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                self.summary = json.load(f)
        self.files = sorted(os.listdir(out_dir))
        self._arrays = {}

    @property
    def arrays(self):
        names = [f[:-4] for f in self.files if f.endswith(".npy")]
        for n in names:
            if n not in self._arrays:
                self._arrays[n] = np.load(os.path.join(self.dir, n + ".npy"))
        return self._arrays

    def __getitem__(self, name):
        return self.arrays[name]

    def __repr__(self):
        return "strata.CaseResult(dir=%r, files=%d)" % (self.dir,
                                                        len(self.files))


def run_case(case: str, out: Optional[str] = None,
             set: Union[Dict[str, Any], Iterable[str]] = (),
             backend: Optional[str] = None,
             checkpoint_every: Optional[int] = None,
             restart: Optional[str] = None, quiet: bool = True,
             program: Optional[str] = None,
             extra: Iterable[str] = ()) -> "CaseResult":
    """Runs a case file with the strata program (`strata run CASE`, so the
    files are those of the command, byte for byte) and returns a
    CaseResult.

    out: the output folder (default the case's [output] dir, NAME.out);
    set: overrides, ["section.key=value", ...] or a dict
    {"section.key": value}; backend: "cpu", "cuda" or "auto".  A refused
    or failed case raises CaseError with the program's message (naming
    the case file's line and key).
    """
    exe = program or find_program()
    args = [exe, "run", os.fspath(case)]
    items = set.items() if isinstance(set, dict) else [
        tuple(s.split("=", 1)) for s in set]
    for k, v in items:
        if isinstance(v, bool):
            v = "true" if v else "false"
        elif isinstance(v, (list, tuple)):
            v = ", ".join(str(x) for x in v)
        args += ["--set", "%s=%s" % (k, v)]
    if out is not None:
        args += ["--out", os.fspath(out)]
    if backend:
        args += ["--backend", backend]
    if checkpoint_every:
        args += ["--checkpoint-every", str(int(checkpoint_every))]
    if restart:
        args += ["--restart", os.fspath(restart)]
    if quiet:
        args.append("--quiet")
    args += list(extra)
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode != 0:
        raise CaseError(p.returncode, p.stderr or p.stdout, args)
    out_dir = out if out is not None else _output_dir(case, dict(items))
    return CaseResult(os.fspath(out_dir), p.stdout, p.stderr)


def _output_dir(case, overrides):
    """The case's output folder: [output] dir, else NAME.out ([case]
    name), as the program chooses it."""
    values, section = {}, ""
    with open(case, encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line.startswith("[") and line.endswith("]"):
                section = line[1:-1].strip()
            elif "=" in line:
                k, v = line.split("=", 1)
                values["%s.%s" % (section, k.strip())] = v.strip().strip('"')
    values.update({k: str(v) for k, v in overrides.items()})
    if values.get("output.dir"):
        return values["output.dir"]
    name = values.get("case.name") or os.path.splitext(
        os.path.basename(os.fspath(case)))[0]
    return "%s.out" % name
