"""imgpipe's exceptions: the C++ library's Error, DataError, IoError and InvalidArgument,
keeping their context, and ArgumentTypeError. The extension raises these for the C++
exceptions of the same names. As Python functions do, an unknown keyword or a value of
the wrong type raises a TypeError (ArgumentTypeError), a bad value a ValueError
(InvalidArgument); both are imgpipe.Error too, so `except imgpipe.Error` catches them."""


class Error(RuntimeError):
    """Base of every error imgpipe raises; str() is a complete sentence."""


class DataError(Error):
    """Bad contents of a file: `path`, `offset` (a byte offset, or None when no offset
    applies) and `reason` (the message without path and offset)."""

    def __init__(self, message, path=None, offset=None, reason=None):
        super().__init__(message)
        self.path = path
        self.offset = offset
        self.reason = reason if reason is not None else message


class IoError(Error, OSError):
    """An operating-system call failed; `errno` is its error number."""

    def __init__(self, message, errno=None):
        Error.__init__(self, message)
        self.errno = errno


class InvalidArgument(Error, ValueError):
    """A bad value of an argument or option (out of range, not an allowed name, or
    impossible with the data, such as a batch larger than a rank's samples)."""


class ArgumentTypeError(Error, TypeError):
    """An unknown keyword, or an argument of the wrong type; names the option and the
    type expected."""
