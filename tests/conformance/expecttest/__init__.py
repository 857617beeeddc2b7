"""A small stand-in for the ``expecttest`` package, which Debian does not ship.

``torch.testing._internal.common_utils`` imports ``expecttest``, reads and sets ``ACCEPT``, and
derives its ``TestCase`` from ``expecttest.TestCase``. The real package can rewrite the expected
string literals in the test sources when ``EXPECTTEST_ACCEPT=1``; this stand-in only compares: a
mismatch fails with the actual text, ready to paste into the test.
"""
import os
import unittest

# common_utils overwrites this with its --accept flag; it is kept for file-based expect tests,
# which common_utils handles itself.
ACCEPT = os.getenv("EXPECTTEST_ACCEPT")

# c10 errors append the C++ stack trace to the message, after this header.
_CPP_STACK_HEADER = "\nException raised from"


def normalize_nl(text):
    """Unifies line endings, so expectations written on any platform compare equal."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _strip_cpp_stack(text):
    """The text without a trailing C++ stack trace, which differs between builds."""
    cut = text.find(_CPP_STACK_HEADER)
    return text if cut < 0 else text[:cut]


class TestCase(unittest.TestCase):
    longMessage = True

    def assertExpectedInline(self, actual, expect, skip=0):
        """Asserts that ``actual`` equals the string literal ``expect``.

        Both are compared after unifying line endings, and ``actual`` without a trailing C++
        stack trace. ``skip`` (how many helper frames to skip to find the literal) is accepted
        for compatibility: this stand-in never rewrites sources, so it does not need the frame.
        """
        del skip
        actual = _strip_cpp_stack(normalize_nl(actual))
        expect = normalize_nl(expect)
        if actual != expect:
            self.assertMultiLineEqual(
                expect, actual,
                msg="expecttest stand-in: sources are not rewritten; the actual text is:\n"
                + actual)

    def assertExpectedRaisesInline(self, exc_type, callable, expect, *args, **kwargs):
        """Asserts that ``callable(*args, **kwargs)`` raises ``exc_type`` whose message is
        ``expect`` (compared as in ``assertExpectedInline``)."""
        try:
            callable(*args, **kwargs)
        except exc_type as error:
            self.assertExpectedInline(str(error), expect, skip=1)
            return
        # Failing outside the try block, so the AssertionError is not taken for exc_type.
        self.fail(msg="Did not raise when expected to")
