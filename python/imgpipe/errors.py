"""imgpipe's exceptions: the C++ library's Error, DataError and IoError, keeping their
context. The extension raises these for the C++ exceptions of the same names."""


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
