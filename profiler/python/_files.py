"""Writing an output file whole or not at all: the text goes to a temporary file beside the
target, which replaces the target only once it is complete, so an interrupted export never
leaves an empty or truncated file in place of a good earlier one."""
import os
import tempfile


def write_atomically(path, write):
    """Calls write(file) on a new text file and renames it to `path` when write returns."""
    directory = os.path.dirname(os.path.abspath(path))
    fd, temporary = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp",
                                     dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            write(out)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise
