"""End-to-end suites: released clients against a real ``kapi serve``."""
