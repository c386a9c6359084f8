"""Exceptions carrying the library's message and the failing option."""
from ._lib import lib


class StrataError(Exception):
    """A call into libstrata failed.

    Attributes: ``status`` (the code's name, e.g. ``"STRATA_EUNSTABLE"``),
    ``code`` (its number), ``message`` (the library's detailed message),
    ``arg`` and ``value`` (the option or argument the failure is about, as
    strata.h names it, e.g. ``"dt"`` and ``"0.003"``; ``""`` when it is
    about no one argument).
    """

    def __init__(self, code, message, arg="", value="", call=""):
        self.code = code
        self.status = lib.strata_status_name(code).decode()
        self.message = message or lib.strata_strerror(code).decode()
        self.arg = arg
        self.value = value
        self.call = call
        text = self.message
        if arg:
            text += " [option %s = %s]" % (arg, value)
        super().__init__("%s: %s" % (self.status, text))


class InvalidArgument(StrataError, ValueError):
    """STRATA_EINVAL, STRATA_ESHAPE, STRATA_EPRECISION, STRATA_EGHOST,
    STRATA_EFORMAT: the input is refused."""


class UnstableError(InvalidArgument):
    """STRATA_EUNSTABLE: the parameters violate a stability limit."""


class NonFiniteError(StrataError, ArithmeticError):
    """STRATA_ENONFINITE: a field holds NaN or infinity (the run blew up)."""


class OutOfMemory(StrataError, MemoryError):
    """STRATA_ENOMEM / STRATA_EOVERFLOW: it does not fit."""


class NotSupported(StrataError, NotImplementedError):
    """STRATA_ENOTSUP / STRATA_ENOBACKEND: not in this backend or build."""


class IOFailure(StrataError, OSError):
    """STRATA_EIO: a file could not be read or written."""


class DeviceError(StrataError, RuntimeError):
    """STRATA_EDEVICE: a CUDA error."""


class Interrupted(StrataError, KeyboardInterrupt):
    """STRATA_EINTERRUPTED."""


_BY_NAME = {
    "STRATA_EINVAL": InvalidArgument, "STRATA_ESHAPE": InvalidArgument,
    "STRATA_EPRECISION": InvalidArgument, "STRATA_EGHOST": InvalidArgument,
    "STRATA_EFORMAT": InvalidArgument, "STRATA_EUNSTABLE": UnstableError,
    "STRATA_ENONFINITE": NonFiniteError, "STRATA_ENOMEM": OutOfMemory,
    "STRATA_EOVERFLOW": OutOfMemory, "STRATA_ENOTSUP": NotSupported,
    "STRATA_ENOBACKEND": NotSupported, "STRATA_EIO": IOFailure,
    "STRATA_EDEVICE": DeviceError, "STRATA_EINTERRUPTED": Interrupted,
}


def error(code, message="", arg="", value="", call=""):
    cls = _BY_NAME.get(lib.strata_status_name(code).decode(), StrataError)
    return cls(code, message, arg, value, call)


def check(code, ctx=None, call="", message=None):
    """Raises the exception of status code, with ctx's message (a raw
    context pointer) when there is one."""
    if code == 0:
        return
    if ctx:
        msg = lib.strata_context_error(ctx).decode(errors="replace")
        arg = lib.strata_context_error_arg(ctx).decode(errors="replace")
        val = lib.strata_context_error_value(ctx).decode(errors="replace")
    else:
        msg, arg, val = message or "", "", ""
    if message and not msg:
        msg = message
    raise error(code, msg, arg, val, call)
